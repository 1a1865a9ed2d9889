"""The compiled wrapper's launches under a virtual device: recorded (each kernel module Inductor wrote, its
autotuner, each launch's arguments and its grid per config), or, while :func:`holding`, run through Inductor's own
launcher with chosen configs (the interpreter check, :mod:`harness.intake.inductor.compiled_check`). Put in place of
``CachingAutotuner.precompile`` and ``.run`` by :mod:`harness.intake.inductor.inductor_face` (its walls 6 and 7).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import itertools
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from harness.support import torchcompat


@dataclass
class Kernel:
    """One kernel module Inductor wrote and asked to precompile: its ``CachingAutotuner`` as Inductor built it."""

    autotuner: Any
    source: str
    launches: list[dict[str, Any]] = field(default_factory=list)  # each run of the compiled wrapper's call
    first_launch: int = 0  # the wrapper's launch number of its first launch (the graph's order)


@dataclass
class Recorder:
    """What one compile recorded, in the order Inductor made it: kernels by name, template choices per selection."""

    kernels: dict[str, Kernel] = field(default_factory=dict)
    choices: list[dict[str, Any]] = field(default_factory=list)


_RECORDER: list[Recorder] = []
_LAUNCHES = itertools.count(1)  # the compiled wrappers' launches, numbered in this process


def recorder() -> Recorder:
    """The recorder of this process (one compile at a time is recorded; :func:`fresh` starts the next)."""
    return _RECORDER[-1]


def recorded(name: str) -> Kernel | None:
    """The kernel of that name this process's last compile recorded (None where none was recorded)."""
    return _RECORDER[-1].kernels.get(name) if _RECORDER else None


def fresh() -> Recorder:
    _RECORDER.append(Recorder())
    return _RECORDER[-1]


def _recording_precompile(self: Any, *args: Any, **kwargs: Any) -> None:
    name = kernel_name(self)
    recorder().kernels.setdefault(name, Kernel(self, _source_of(self)))


def kernel_name(autotuner: Any) -> str:
    """The kernel's function name (what its module defines; torch 2.11 leaves ``inductor_meta["kernel_name"]`` a
    placeholder until after precompile)."""
    return str(getattr(autotuner.fn, "__name__", None) or autotuner.inductor_meta.get("kernel_name") or "kernel")


def _source_of(autotuner: Any) -> str:
    """The module Inductor wrote for this kernel (its file, else the file its JIT function came from)."""
    candidates = [getattr(autotuner, "filename", None)]
    with contextlib.suppress(TypeError, OSError):
        candidates.append(inspect.getsourcefile(getattr(autotuner.fn, "fn", autotuner.fn)))
    for filename in candidates:
        if filename and os.path.isfile(filename):
            with open(filename, encoding="utf-8") as f:
                return f.read()
    return ""


#: Inductor's own ``CachingAutotuner.run``, kept for :func:`holding`
_INDUCTOR_RUN: list[Callable[..., Any]] = []
#: while :func:`holding` runs: the config each named kernel is held to
_HELD: list[Mapping[str, object]] = []
#: while :func:`observing` runs: called around each held launch as ``observer(autotuner, args, kwargs, launch)``
Observer = Callable[[Any, tuple[Any, ...], dict[str, object], Callable[[], Any]], Any]
_OBSERVERS: list[Observer] = []


class KernelRunError(Exception):
    """A kernel of the compiled graph failed while it ran (under the interpreter); ``kernel`` names it."""

    def __init__(self, kernel: str, cause: BaseException) -> None:
        super().__init__(f"{kernel}: {type(cause).__name__}: {' '.join(str(cause).split())[:240]}")
        self.kernel = kernel


@contextlib.contextmanager
def holding(held: Mapping[str, object]) -> Any:
    """The compiled wrapper's launches run for the block, through Inductor's own launcher (its interpreter branch
    where ``TRITON_INTERPRET=1``): each kernel named in ``held`` with that config, every other with its first."""
    _HELD.append(held)
    try:
        yield
    finally:
        _HELD.pop()


@contextlib.contextmanager
def observing(observer: Observer) -> Any:
    """While :func:`holding`: each launch handed to ``observer(autotuner, args, kwargs, launch)``, which calls
    ``launch()`` to run it (a check's reference run keeps each launch's arguments before and after)."""
    _OBSERVERS.append(observer)
    try:
        yield
    finally:
        _OBSERVERS.pop()


def _recording_run(self: Any, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
    if _HELD:
        if _OBSERVERS:
            return _OBSERVERS[-1](self, args, {"stream": stream, **kwargs},
                                  lambda: _held_run(self, *args, stream=stream, **kwargs))  # fmt: skip
        return _held_run(self, *args, stream=stream, **kwargs)
    _record_launch(self, *args)
    return None


def run_with(autotuner: Any, config: Any, args: tuple[Any, ...], kwargs: Mapping[str, object]) -> Any:
    """One launch of a kernel with ``config``, through Inductor's own launcher (a check's launch on its own)."""
    with holding({kernel_name(autotuner): config}):
        return _held_run(autotuner, *args, **kwargs)


def _held_run(self: Any, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
    configs = self.configs
    self.configs = [_HELD[-1].get(kernel_name(self), configs[0])]
    try:
        return _INDUCTOR_RUN[0](self, *args, stream=stream, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the kernel's own failure, named by the kernel
        raise KernelRunError(kernel_name(self), exc) from exc
    finally:
        self.configs = configs


def _bound(autotuner: Any, args: tuple[Any, ...]) -> dict[str, object]:
    return dict(zip([n for n in autotuner.fn.arg_names if n not in _config_names(autotuner)], args))


def grid_of(autotuner: Any, config: Any, args: tuple[Any, ...]) -> tuple[int, ...]:
    """The grid Inductor launches the kernel with under ``config`` for these arguments (its own grid expression)."""
    extra = autotuner.inductor_meta.get("extra_launcher_args")
    if extra is not None:  # a template's fixed grid, passed as trailing arguments
        return tuple(int(a) for a in args[len(args) - len(extra) :])
    GridExpr = torchcompat.triton_heuristics().GridExpr
    meta = {**_bound(autotuner, args), **config.kwargs}
    return tuple(int(g) for g in GridExpr.from_meta(autotuner.inductor_meta, config).eval_slow(meta))


def _record_launch(self: Any, *args: Any) -> None:
    name = kernel_name(self)
    kernel = recorder().kernels.setdefault(name, Kernel(self, _source_of(self)))
    bound = _bound(self, args)
    grids = [grid_of(self, cfg, args) for cfg in candidates(self)]
    if not kernel.launches:
        kernel.first_launch = next(_LAUNCHES)
    kernel.launches.append({"args": {k: _described(v) for k, v in bound.items()}, "grids": grids})


def _config_names(autotuner: Any) -> set[str]:
    return {k for cfg in autotuner.configs for k in cfg.kwargs}


def candidates(autotuner: Any) -> list[Any]:
    """Every config the kernel may launch with: Inductor's list, then the coordinate-descent candidates."""
    return list(autotuner.configs) + coordesc(autotuner)


def coordesc(autotuner: Any) -> list[Any]:
    """With ``coordinate_descent_tuning`` on (an entry's option, or max-autotune's mode): the configs Inductor's
    coordinate-descent tuner tries first from the winner (the first config, by the capture's policy), by its own
    rules under the target's face: each neighbour of the winner along each of the tuner's tunable fields
    (``CoordescTuner.tunable_fields``, ``get_neighbour_values``, ``is_valid_config``: warps up to the device's threads
    per block over its warp size, ``waves_per_eu`` on HIP only), the ones Inductor lists already left out. Where the
    descent goes next depends on timings a virtual device does not have: its first round is what is built."""
    if not autotuner.inductor_meta.get("coordinate_descent_tuning") or not autotuner.configs:
        return []
    made = autotuner.__dict__.get("_harness_coordesc")
    if made is not None:
        return list(made)
    import copy

    tuning = torchcompat.coordinate_descent_tuner()
    tuner, winner = autotuner.coordesc_tuner, autotuner.configs[0]
    seen = {_config_key(c) for c in autotuner.configs}
    fields = tuner.tunable_fields
    made = []
    for name in fields() if callable(fields) else fields:
        value = tuning.get_field(winner, name)
        if value is None:
            continue
        for neighbour in tuner.get_neighbour_values(name, value):
            candidate = copy.deepcopy(winner)
            tuning.set_field(candidate, name, neighbour)
            if tuner.is_valid_config(candidate) and _config_key(candidate) not in seen:
                seen.add(_config_key(candidate))
                made.append(candidate)
    autotuner._harness_coordesc = made
    return list(made)


def _config_key(cfg: Any) -> str:
    from harness.authoring.decorated import config_dict

    return repr(sorted(config_dict(cfg).items()))


def _described(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return {"dtype": str(value.dtype).removeprefix("torch."), "shape": list(value.shape),
                "stride": list(value.stride()), "offset": int(value.storage_offset())}  # fmt: skip
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


#: where the compiled wrapper's buffers are allocated: on the face's device (fakes), or on the host while
#: :func:`on_host` runs a compiled graph on real values (:mod:`harness.intake.inductor.compiled_check`)


def launch_order(recorder: Recorder) -> list[tuple[str, Kernel]]:
    """The kernels the compiled wrapper launches, in its order. A module Inductor precompiled but the wrapper never
    launches (a max-autotune choice's benchmark module, precompiled before it is timed on torch 2.11) is not part of
    the graph: :func:`harness.intake.inductor.compiled.capture_table` names it under ``not_launched``."""
    launched = [(n, k) for n, k in recorder.kernels.items() if k.launches]
    return sorted(launched, key=lambda item: item[1].first_launch)


def kernel_table(name: str, kernel: Kernel) -> dict[str, Any]:
    """One recorded kernel as a capture's JSON table gives it: source, heuristic, metadata, configs, launches."""
    from harness.authoring.decorated import config_dict

    auto = kernel.autotuner
    return {
        "name": name,
        "heuristic": str(getattr(auto.heuristic_type, "name", auto.heuristic_type)).lower(),
        "source": kernel.source,
        "source_sha256": hashlib.sha256(kernel.source.encode()).hexdigest(),
        "size_hints": _jsonable(getattr(auto, "size_hints", None)),
        "triton_meta": _jsonable({**auto.triton_meta, "device": _device(auto.device_props)}),
        "inductor_meta": _jsonable(auto.inductor_meta),
        "configs": [config_dict(c) for c in auto.configs],
        # with coordinate_descent_tuning: its tuner's first candidates (after "configs" in "checks" and the grids)
        "coordesc": [config_dict(c) for c in coordesc(auto)],
        "launches": kernel.launches,
    }


def _device(props: Any) -> dict[str, Any]:
    fields = ("type", "index", "multi_processor_count", "cc", "major", "regs_per_multiprocessor",
              "max_threads_per_multi_processor", "max_threads_per_block", "warp_size")  # fmt: skip
    return {f: getattr(props, f, None) for f in fields}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        if any(not isinstance(k, str) for k in value):  # Triton's attribute dicts key on argument index tuples
            return [[_jsonable(k), _jsonable(v)] for k, v in value.items()]
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)
