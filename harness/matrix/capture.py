"""Recording the Triton launches a PyTorch-level op makes, without running them: every launch, as Triton makes it.

While :func:`launches` is active, ``JITFunction.run`` (what every launch reaches at last, through any autotuner
or heuristics layer, Triton's or a library's own) records its arguments, grid and options and returns ``None``.
Everything above it is Triton's own code: heuristics are evaluated by ``Heuristics.run``, an autotuner prunes with
its ``early_config_prune`` (called as Triton calls it, named arguments and launch keyword arguments), its
``perf_model`` / ``top_k``, and "benchmarks" each config it keeps through the active driver's benchmarker, which
under a virtual device (:mod:`harness.matrix.face`) runs each candidate once with its launch recorded as a
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

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

_LOCK = threading.Lock()
_STATE = threading.local()


@dataclass(frozen=True)
class Launch:
    """One recorded ``JITFunction.run``: the JIT function, the object the op called (decorated or not), which call
    of the op it belongs to, whether an autotuner made it as a candidate, its arguments by name (constexprs too),
    the grid as given and the launch options."""

    jit: Any
    outer: Any
    call: int
    candidate: bool
    args: Mapping[str, Any]
    grid: Any
    options: Mapping[str, Any]
    passed: frozenset[str]  # the names the op itself passed (positionally or by keyword) in this call

    @property
    def name(self) -> str:
        fn = getattr(self.jit, "fn", self.jit)
        return str(getattr(fn, "__name__", type(self.jit).__name__))


@dataclass(frozen=True)
class KernelLaunch:
    """One distinct launch of one kernel by the op: its space (each config with the launch made for it), the names
    the configs set (tunables), its order among the op's launches of that kernel."""

    name: str
    ordinal: int
    of: int
    jit: Any
    outer: Any
    tunables: tuple[str, ...]
    space: tuple[tuple[dict[str, Any], Launch], ...]
    tuned: bool  # an autotuner chose among candidates

    @property
    def configs(self) -> list[dict[str, Any]]:
        return [dict(c) for c, _ in self.space]

    def launch_for(self, config: Mapping[str, Any] | None) -> Launch:
        if config is None:
            return self.space[0][1]
        wanted = dict(config)
        for c, la in self.space:
            if c == wanted:
                return la
        # the build asks with the tunables alone (the options are the compile's): the arguments follow from those
        meta = {k: v for k, v in wanted.items() if k in self.tunables}
        if len(meta) == len(wanted):
            for c, la in self.space:
                if {k: v for k, v in c.items() if k in self.tunables} == meta:
                    return la
        raise CaptureError(f"the op never launches {self.name} with config {wanted} (it launches {self.configs})")


class CaptureError(Exception):
    """The op could not be run in capture mode; the message says why in one line."""


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


def _chain(obj: Any) -> list[Any]:
    """The layers from the object the op called down to its JIT function (autotuners, heuristics, a library's own)."""
    out = []
    for _ in range(16):
        if obj is None:
            break
        out.append(obj)
        if type(obj).__name__ == "JITFunction":
            break
        obj = getattr(obj, "fn", None)
    return out


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
        outer, number, passed = call if call else (self, len(found), frozenset(bound))
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
    from triton.runtime.jit import JITFunction, KernelInterface

    with _LOCK:
        saved_run = JITFunction.__dict__["run"]
        saved_getitem = KernelInterface.__dict__["__getitem__"]
        found: list[Launch] = []
        _STATE.found, _STATE.call, _STATE.calls = found, None, 0
        try:
            JITFunction.run = _recording_run(saved_run)  # type: ignore[method-assign]
            KernelInterface.__getitem__ = _recording_getitem(saved_getitem)  # type: ignore[method-assign]
            yield found
        finally:
            _STATE.found = None
            JITFunction.run = saved_run  # type: ignore[method-assign]
            KernelInterface.__getitem__ = saved_getitem  # type: ignore[method-assign]


def _config_of(launch: Launch, tunables: tuple[str, ...]) -> dict[str, Any]:
    return {**{k: launch.args[k] for k in tunables if k in launch.args}, **dict(launch.options)}


def _identity(launch: Launch, tunables: tuple[str, ...], tuned: bool) -> str:
    """What makes two calls of a kernel one launch: everything but the config (and, untuned, the options too)."""
    from harness.matrix.ops import describe_value

    fixed = {k: describe_value(v) for k, v in sorted(launch.args.items()) if k not in tunables}
    return repr((launch.name, sorted(fixed.items()), () if tuned else sorted(launch.options.items())))


def group(found: list[Launch]) -> list[KernelLaunch]:
    """The op's distinct launches, per kernel in the op's order."""
    calls: dict[int, list[Launch]] = {}
    for la in found:
        calls.setdefault(la.call, []).append(la)
    distinct: list[tuple[str, Launch, list[Launch], tuple[str, ...], bool]] = []
    seen: set[str] = set()
    for _, made in sorted(calls.items()):
        candidates = [la for la in made if la.candidate]
        final = [la for la in made if not la.candidate][-1:] or candidates[-1:]
        space = candidates or final
        passed = final[0].passed if final else space[0].passed
        tunables = _tunables(space, passed) if candidates else ()
        key = _identity(space[0], tunables, bool(candidates))
        if key in seen:
            continue
        seen.add(key)
        distinct.append((space[0].name, space[0], space, tunables, bool(candidates)))
    counts: dict[str, int] = {}
    for name, *_ in distinct:
        counts[name] = counts.get(name, 0) + 1
    ordinal: dict[str, int] = {}
    out = []
    for name, first, space, tunables, tuned in distinct:
        ordinal[name] = ordinal.get(name, 0) + 1
        pairs: list[tuple[dict[str, Any], Launch]] = []
        for la in space:
            config = _config_of(la, tunables)
            if all(config != c for c, _ in pairs):
                pairs.append((config, la))
        out.append(
            KernelLaunch(name, ordinal[name], counts[name], first.jit, first.outer, tunables, tuple(pairs), tuned)
        )
    return out


def _tunables(candidates: list[Launch], passed: frozenset[str]) -> tuple[str, ...]:
    """The constexprs the autotuner's configs set: the names its listed configs give, and any that differ between
    candidates (a pruner's rewritten configs), less what the op passed and what a heuristics layer computes."""
    first = candidates[0]
    params = {p.name: p for p in getattr(first.jit, "params", [])}
    listed: set[str] = set()
    computed: set[str] = set()
    for layer in _chain(first.outer)[:-1]:
        for config in getattr(layer, "configs", None) or []:
            listed.update(getattr(config, "kwargs", {}) or {})
        values = getattr(layer, "values", None)
        if isinstance(values, dict):
            computed.update(values)
    varying = {k for k in first.args if any(_differs(la.args.get(k), first.args[k]) for la in candidates)}
    return tuple(
        name
        for name in first.args
        if (name in listed or name in varying)
        and name not in passed
        and name not in computed
        and getattr(params.get(name), "is_constexpr", False)
    )


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:  # noqa: BLE001 - tensors compare elementwise
        return a is not b


def capture(
    op: Callable[..., Any], make_inputs: Callable[..., tuple], shape: Mapping[str, Any], dtype: str
) -> tuple[list[KernelLaunch], Any, tuple, str]:
    """(the op's distinct launches, its result, the inputs, the device that served)."""
    import torch

    from harness.matrix import face

    problems = []
    if face.worn() is not None:
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
            problems.append(f"{_served(device)}: the inputs function raised {type(exc).__name__}: {_short(exc)}")
            continue
        try:
            with launches() as found:
                result = op(*inputs)
        except Exception as exc:  # noqa: BLE001 - the library's op may raise anything
            problems.append(f"{_served(device)}: the op raised {type(exc).__name__}: {_short(exc)}")
            continue
        if not found:
            problems.append(f"{_served(device)}: the op made no Triton launch")
            continue
        return group(found), result, inputs, _served(device)
    raise CaptureError("; ".join(problems))


def _served(device: str) -> str:
    from harness.matrix import face

    return "cuda (virtual)" if device == "cuda" and face.worn() is not None else device


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("..." if len(text) > 200 else "")
