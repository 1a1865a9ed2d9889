"""An op's recorded launches grouped as the harness builds them: one *call* per ``kernel[grid](...)`` the op makes
(an autotuned kernel's candidates, then its final launch), one :class:`KernelLaunch` per distinct launch of a kernel
(calls that differ in anything but the config), numbered in the op's order. Kept apart from the recording itself
(:mod:`harness.intake.launches.capture`), which patches Triton while an op runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


class CaptureError(Exception):
    """The op could not be run in capture mode; the message says why in one line."""


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
    calls: tuple[int, ...] = ()  # the op's calls (``kernel[grid](...)``, numbered from 1) that made this launch

    @property
    def repeats(self) -> tuple[int, ...]:
        """The calls after the first that made this launch again, identical in all but the config (one build)."""
        return self.calls[1:]

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


def _chain(obj: Any) -> list[Any]:
    """The layers from the object the op called down to its JIT function (autotuners, heuristics, a library's own)."""
    out = []
    for _ in range(16):
        if obj is None:
            break
        out.append(obj)
        if type(obj).__name__ in ("JITFunction", "InterpretedFunction"):
            break
        obj = getattr(obj, "fn", None)
    return out


def _config_of(launch: Launch, tunables: tuple[str, ...]) -> dict[str, Any]:
    """The config of one launch, as :func:`harness.authoring.decorated.config_dict` writes a ``triton.Config``."""
    options = {k: v for k, v in launch.options.items() if not (k == "num_ctas" and v == 1)}
    return {**{k: launch.args[k] for k in tunables if k in launch.args}, **options}


def _identity(launch: Launch, tunables: tuple[str, ...], tuned: bool) -> str:
    """What makes two calls of a kernel one launch: everything but the config (and, untuned, the options too)."""
    fixed = {k: _described(v) for k, v in sorted(launch.args.items()) if k not in tunables}
    return repr((launch.name, sorted(fixed.items()), () if tuned else sorted(launch.options.items())))


def _described(value: Any) -> Any:
    """A hashable account of an argument (a tensor by dtype, shape, strides, storage size and alignment)."""
    if hasattr(value, "untyped_storage") and hasattr(value, "stride"):
        offset = value.storage_offset() * value.element_size()
        return ("tensor", str(value.dtype), tuple(value.shape), tuple(value.stride()),
                value.untyped_storage().nbytes(), offset % 16)  # fmt: skip
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def group(found: list[Launch]) -> list[KernelLaunch]:
    """The op's distinct launches, per kernel in the op's order."""
    calls: dict[int, list[Launch]] = {}
    for la in found:
        calls.setdefault(la.call, []).append(la)
    distinct: list[tuple[str, Launch, list[Launch], tuple[str, ...], bool]] = []
    seen: dict[str, int] = {}  # a launch's identity -> its index in ``distinct``
    made_by: list[list[int]] = []
    for number, made in sorted(calls.items()):
        candidates = [la for la in made if la.candidate]
        final = [la for la in made if not la.candidate][-1:] or candidates[-1:]
        space = candidates or final
        passed = final[0].passed if final else space[0].passed
        tunables = _tunables(space, passed) if candidates else ()
        key = _identity(space[0], tunables, bool(candidates))
        if key in seen:
            made_by[seen[key]].append(number)
            continue
        seen[key] = len(distinct)
        made_by.append([number])
        distinct.append((space[0].name, space[0], space, tunables, bool(candidates)))
    counts: dict[str, int] = {}
    for name, *_ in distinct:
        counts[name] = counts.get(name, 0) + 1
    ordinal: dict[str, int] = {}
    out = []
    for (name, first, space, tunables, tuned), numbers in zip(distinct, made_by):
        ordinal[name] = ordinal.get(name, 0) + 1
        pairs: list[tuple[dict[str, Any], Launch]] = []
        for la in space:
            config = _config_of(la, tunables)
            if all(config != c for c, _ in pairs):
                pairs.append((config, la))
        out.append(
            KernelLaunch(
                name, ordinal[name], counts[name], first.jit, first.outer, tunables, tuple(pairs), tuned,
                tuple(numbers),
            )
        )  # fmt: skip
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
