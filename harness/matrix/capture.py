"""Recording the Triton launches a PyTorch-level op makes, without running them.

While :func:`launches` is active, ``run`` of every ``JITFunction``, ``Autotuner`` and ``Heuristics`` (the
methods ``kernel[grid](...)`` calls) is replaced by a recorder: the outermost kernel object reached keeps the
call's arguments and grid and returns ``None``, so nothing is compiled, autotuned or launched and the op's own
Python (shape checks, allocations, strides, the constexprs it computes, the grid) runs as it does on a GPU.

The op runs on ``meta`` tensors first (no memory, any size), and on CPU tensors where meta cannot serve it (an
op that reads a value, ``.item()``); which one served is recorded. An op registered per device through
``torch.library`` dispatches its ``CUDA`` implementation only for CUDA tensors: on a machine without a GPU,
name that implementation function as the op.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

_LOCK = threading.Lock()
_STATE = threading.local()


@dataclass(frozen=True)
class Launch:
    """One recorded launch: the kernel object the op called (decorated or not), its arguments by name, the grid
    as given (a tuple or a callable of the meta-parameters) and the launch options the op passed."""

    kernel: Any
    args: Mapping[str, Any]
    grid: Any
    options: Mapping[str, Any]

    @property
    def name(self) -> str:
        from harness.authoring.decorated import unwrap

        jit, _ = unwrap(self.kernel)
        fn = getattr(jit, "fn", jit)
        return getattr(fn, "__name__", type(jit).__name__)


class CaptureError(Exception):
    """The op could not be run in capture mode; the message says why in one line."""


def _arg_names(kernel: Any) -> list[str]:
    from harness.authoring.decorated import unwrap

    jit, _ = unwrap(kernel)
    return list(getattr(jit, "arg_names", []))


#: keyword arguments of ``JITFunction.run`` that are launch options, not kernel parameters
OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


def _recorder(original: Callable[..., Any]) -> Callable[..., Any]:
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = getattr(_STATE, "found", None)
        if found is None:  # not capturing (another thread, or outside the block): Triton's own run
            return original(self, *args, **kwargs)
        grid = kwargs.pop("grid", None)
        kwargs.pop("warmup", None)
        names = _arg_names(self)
        bound = dict(zip(names, args))
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in OPTIONS}
        bound.update(kwargs)
        found.append(Launch(self, bound, grid, options))
        return None

    return run


@contextmanager
def launches() -> Iterator[list[Launch]]:
    """Record (and do not run) every Triton launch made in this thread while the block runs."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    with _LOCK:
        classes = (JITFunction, Autotuner, Heuristics)
        saved = [(cls, cls.__dict__["run"]) for cls in classes]
        found: list[Launch] = []
        _STATE.found = found
        try:
            for cls, original in saved:
                cls.run = _recorder(original)  # type: ignore[method-assign]
            yield found
        finally:
            _STATE.found = None
            for cls, original in saved:
                cls.run = original  # type: ignore[method-assign]


def capture(
    op: Callable[..., Any], make_inputs: Callable[..., tuple], shape: Mapping[str, Any], dtype: str
) -> tuple[list[Launch], Any, tuple, str]:
    """(the launches, the op's result, the inputs, the device that served: ``meta`` or ``cpu``)."""
    import torch

    problems = []
    for device in ("meta", "cpu"):
        try:
            generator = torch.Generator(device="cpu").manual_seed(0)
            inputs = tuple(make_inputs(dict(shape), dtype, device, generator))
        except Exception as exc:  # noqa: BLE001 - a user's input function may raise anything
            problems.append(f"{device}: the inputs function raised {type(exc).__name__}: {_short(exc)}")
            continue
        try:
            with launches() as found:
                result = op(*inputs)
        except Exception as exc:  # noqa: BLE001 - the library's op may raise anything
            problems.append(f"{device}: the op raised {type(exc).__name__}: {_short(exc)}")
            continue
        if not found:
            problems.append(f"{device}: the op made no Triton launch")
            continue
        return found, result, inputs, device
    raise CaptureError("; ".join(problems))


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("..." if len(text) > 200 else "")
