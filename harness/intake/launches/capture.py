"""Recording the Triton launches a PyTorch-level op makes, without running them: every launch, as Triton makes it.

While :func:`launches` is active, ``JITFunction.run`` (what every launch reaches at last, through any autotuner
or heuristics layer, Triton's or a library's own) records its arguments, grid and options and returns ``None``.
Everything above it is Triton's own code: heuristics are evaluated by ``Heuristics.run``, an autotuner prunes with
its ``early_config_prune`` (called as Triton calls it, named arguments and launch keyword arguments), its
``perf_model`` / ``top_k``, and "benchmarks" each config it keeps through the active driver's benchmarker, which
under a virtual device (:mod:`harness.intake.virtual_device.face`) runs each candidate once with its launch recorded as a
candidate. So a pruner that rewrites configs has its configs built, and one that reads the device reads the face.

One call of a kernel object by the op (``kernel[grid](...)``) is one *call*: its candidates (an autotuned
kernel's space after pruning) and its final launch. Calls of one kernel that differ in anything but the config
(other constexprs, arguments' types, options of an untuned launch) are distinct *launches*, numbered in the op's
order (``launch 2 of 2``); identical ones are one.

Tensors: under a face, CUDA-faced meta tensors; without one, on a GPU host real CUDA tensors (nothing runs on
them), else ``meta``; CPU tensors where those cannot serve (an op that reads a value); the device that served is
recorded.
"""

from __future__ import annotations

import itertools
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping

from harness.intake.inductor import compiled_regions
from harness.intake.launches.launch_groups import CaptureError, KernelLaunch, Launch, _chain, group

__all__ = ["CaptureError", "KernelLaunch", "Launch", "capture", "group", "launches"]

_LOCK = threading.Lock()
_STATE = threading.local()

#: keyword arguments of ``JITFunction.run`` that are launch options, not kernel parameters
OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


def _state(name: str, default: Any) -> Any:
    return getattr(_STATE, name, default)


@contextmanager
def candidate() -> Iterator[None]:
    """Launches made in this block are an autotuner's candidates (the face's benchmarker runs them here)."""
    before = _state("candidate", False)
    _STATE.candidate = True
    try:
        yield
    finally:
        _STATE.candidate = before


_BENCH = itertools.count(1)


def bench_once(kernel_call: Callable[[], Any], *args: Any, quantiles: Any = None, **kwargs: Any) -> Any:
    """The benchmarker while launches are recorded: the candidate runs once, its launches recorded as candidates
    and not run; the times returned grow with each call, so the autotuner keeps its first candidate (on a GPU the
    device decides for real, later)."""
    with candidate():
        kernel_call()
    t = float(next(_BENCH))
    return [t for _ in quantiles] if quantiles else t


def _clear_tuning(obj: Any) -> None:
    """Forget what the autotuners in ``obj``'s chain chose before, so each call prunes and benchmarks again: their
    in-memory choices, and the on-disk ones (``cache_results``: an earlier capture's "timings" must not stand in)."""
    for layer in _chain(obj)[:-1]:
        cache = getattr(layer, "cache", None)
        if isinstance(cache, dict):
            cache.clear()
        if getattr(layer, "cache_results", False):
            layer.cache_results = False


def _recording_run(original: Callable[..., Any]) -> Callable[..., Any]:
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = _state("found", None)
        if found is None:  # not capturing (another thread, or outside the block): Triton's own run
            return original(self, *args, **kwargs)
        grid = kwargs.pop("grid", None)
        kwargs.pop("warmup", None)
        names = list(getattr(self, "arg_names", []))
        bound = dict(zip(names, args))
        options = {k: v for k in list(kwargs) if k not in names and (v := kwargs.pop(k)) is not None}
        bound.update(kwargs)
        call = _state("call", None)
        if call is None:  # a direct ``run`` (no ``kernel[grid]``): a call of its own, numbered with the others
            _STATE.calls = _state("calls", 0) + 1
            call = (self, _STATE.calls, frozenset(bound))
        outer, number, passed = call
        found.append(Launch(self, outer, number, _state("candidate", False), bound, grid, options, passed))
        return None

    return run


def _recording_getitem(original: Callable[..., Any]) -> Callable[..., Any]:
    def getitem(self: Any, grid: Any) -> Any:
        launcher = original(self, grid)
        if _state("found", None) is None:
            return launcher

        def call(*args: Any, **kwargs: Any) -> Any:
            if _state("call", None) is not None:  # a launch inside a launch (a library's own wrapper)
                return launcher(*args, **kwargs)
            names = list(getattr(self, "arg_names", []))
            _STATE.calls = _state("calls", 0) + 1
            _STATE.call = (self, _STATE.calls, frozenset(names[: len(args)]) | frozenset(kwargs))
            _clear_tuning(self)
            try:
                return launcher(*args, **kwargs)
            finally:
                _STATE.call = None

        return call

    return getitem


@contextmanager
def launches() -> Iterator[list[Launch]]:
    """Record (and do not run) every Triton launch made in this thread while the block runs."""
    import triton.testing
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction, KernelInterface

    with _LOCK:
        saved_run = JITFunction.__dict__["run"]
        saved_getitem = KernelInterface.__dict__["__getitem__"]
        interpreted = _interpreted_class()  # under TRITON_INTERPRET=1 a library's kernels are these
        saved_interpreted = interpreted.__dict__["run"] if interpreted else None
        saved_bench = Autotuner.__dict__.get("do_bench")
        saved_testing = triton.testing.do_bench
        found: list[Launch] = []
        _STATE.found, _STATE.call, _STATE.calls = found, None, 0
        try:
            JITFunction.run = _recording_run(saved_run)  # type: ignore[method-assign]
            if interpreted and saved_interpreted is not None:
                interpreted.run = _recording_run(saved_interpreted)
            KernelInterface.__getitem__ = _recording_getitem(saved_getitem)  # type: ignore[method-assign]
            # nothing is timed: Triton's autotuner (and a library's own, through triton.testing) "benchmarks" each
            # candidate it kept by running it once, recorded
            Autotuner.do_bench = property(lambda self: bench_once)  # type: ignore[assignment,method-assign]
            triton.testing.do_bench = bench_once
            yield found
        finally:
            _STATE.found = None
            JITFunction.run = saved_run  # type: ignore[method-assign]
            if interpreted:
                interpreted.run = saved_interpreted
            KernelInterface.__getitem__ = saved_getitem  # type: ignore[method-assign]
            triton.testing.do_bench = saved_testing
            if saved_bench is None:
                del Autotuner.do_bench
            else:
                Autotuner.do_bench = saved_bench  # type: ignore[method-assign]


def _interpreted_class() -> Any:
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return None
    return InterpretedFunction


def capture(
    op: Callable[..., Any],
    make_inputs: Callable[..., tuple],
    shape: Mapping[str, Any],
    dtype: str,
    faced: bool = False,
) -> tuple[list[KernelLaunch], Any, tuple, str]:
    """(the op's distinct launches, its result, the inputs, the device that served); ``faced``: this process
    wears a virtual device (:mod:`harness.intake.virtual_device.face`), whose ``cuda`` tensors are CUDA-faced meta ones."""
    import torch

    problems = []
    devices: tuple[str, ...]
    if faced:
        devices = ("cuda", "cpu")
    elif torch.cuda.is_available():
        devices = ("cuda", "meta", "cpu")
    else:
        devices = ("meta", "cpu")
    for device in devices:
        try:
            generator = torch.Generator(device="cpu").manual_seed(0)
            inputs = tuple(make_inputs(dict(shape), dtype, device, generator))
        except Exception as exc:  # noqa: BLE001 - a user's input function may raise anything
            problems.append(f"{_served(device, faced)}: the inputs function raised {type(exc).__name__}: {_short(exc)}")
            continue
        compiled_regions.reset()
        try:
            with launches() as found:
                result = op(*inputs)
        except Exception as exc:  # noqa: BLE001 - the library's op may raise anything
            problems.append(f"{_served(device, faced)}: the op raised {type(exc).__name__}: {_short(exc)}")
            continue
        if not found and not compiled_regions.kernels():
            problems.append(f"{_served(device, faced)}: the op made no Triton launch, of its own or compiled")
            continue
        return group(found), result, inputs, _served(device, faced)
    raise CaptureError("; ".join(problems))


def _served(device: str, faced: bool) -> str:
    return "cuda (virtual)" if device == "cuda" and faced else device


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("..." if len(text) > 200 else "")
