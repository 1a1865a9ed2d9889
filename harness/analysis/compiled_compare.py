"""Two runs' compiled kernels compared, the question a team asks before bumping torch (each torch fixes the Triton
and the Inductor that write its kernels): per compiled entry, target, shape and dtype, the kernels added, removed and
changed (source, configs), and what got worse (a candidate that built and fit and now fails or exceeds a limit).

Reads the records a run makes (``harness run`` with a ``compiled:`` section, or ``harness compiled``, which is such
a run): each record is one config of one kernel of one target's graph. :func:`graphs_of` gathers them into that
graph, once; :func:`compare` decides, never renders.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from harness.model.ids import config_key
from harness.model.kernel_refs import graph_identity
from harness.model.records import Record

Key = tuple[str, str, str, str]  # entry, target, shape, dtype


@dataclass(frozen=True)
class Verdict:
    """One candidate's build: whether it fit, and why not in words."""

    config: str  # canonical JSON of the config
    fits: bool
    why: str


@dataclass(frozen=True)
class GraphKernel:
    """One kernel of a target's graph: its module (sha256 and text, "" where the run directory lost it) and each
    config Inductor listed for it, with that config's verdict."""

    name: str
    source_sha256: str
    source: str
    verdicts: tuple[Verdict, ...]
    identity: str = ""  # its place in the graph (harness.model.kernel_refs.graph_identity): what two runs match by

    @property
    def configs(self) -> tuple[str, ...]:
        return tuple(v.config for v in self.verdicts)


@dataclass(frozen=True)
class KernelGraph:
    """One entry's kernels on one target for one shape and dtype, in the compiled wrapper's launch order."""

    key: Key
    torch: str
    kernels: tuple[GraphKernel, ...]


@dataclass(frozen=True)
class KernelChange:
    """One kernel of one entry, target, shape and dtype that is new, gone or different."""

    key: Key
    kernel: str
    kind: str  # "added" | "removed" | "changed"
    detail: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledComparison:
    base_torch: str
    new_torch: str
    changes: tuple[KernelChange, ...]
    worse: tuple[str, ...]
    only_in_base: tuple[str, ...]  # entries, shapes or targets the new run has no kernels of (not judged)
    only_in_new: tuple[str, ...]
    across_shapes: tuple[tuple[str, str], ...] = ()  # (base graph, new graph) matched at another shape

    @property
    def exit_code(self) -> int:
        return 2 if self.worse else 0


def _label(key: Key) -> str:
    return " ".join(key)


def graphs_of(records: Iterable[Record], source: Callable[[Record], str]) -> dict[Key, KernelGraph]:
    """A run's compiled kernels as graphs: per entry, target, shape and dtype (default environment, compile records),
    the kernels in the order the graph names them, each with its configs and their verdicts. ``source``: the module
    text a record's ``inductor`` artifact holds."""
    found: dict[Key, tuple[str, tuple[str, ...], dict[str, list[Record]]]] = {}
    for r in records:
        if r.inductor.entry is None or r.mode != "compile" or r.environment != "default":
            continue
        key = (r.inductor.entry, r.target, r.shape_id, r.dtype)
        _, graph, by_kernel = found.setdefault(key, (str(r.inductor.torch or ""), tuple(r.inductor.graph or ()), {}))
        by_kernel.setdefault(str(r.inductor.kernel), []).append(r)
    out = {}
    for key, (torch, graph, by_kernel) in found.items():
        kernels = tuple(
            _kernel(name, by_kernel[name], source, graph_identity(graph, i))
            for i, name in enumerate(graph, start=1)
            if name in by_kernel
        )
        out[key] = KernelGraph(key, torch, kernels)
    return out


def _kernel(name: str, records: list[Record], source: Callable[[Record], str], identity: str) -> GraphKernel:
    verdicts = []
    for r in records:
        errors = [f for f in r.flags if f.severity == "error"]
        why = r.error if r.status != "ok" else ", ".join(f"{f.resource} {f.value:g} over {f.limit:g}" for f in errors)
        verdicts.append(Verdict(config_key(r.config), r.status == "ok" and not errors, " ".join(why.split())[:240]))
    first = records[0]
    return GraphKernel(name, str(first.inductor.source_sha256 or ""), source(first), tuple(verdicts), identity)


def compare(base: dict[Key, KernelGraph], new: dict[Key, KernelGraph]) -> CompiledComparison:
    """Graphs of the same entry, target, shape and dtype compared kernel by kernel; then an entry's graph at a shape
    only one run has, paired with the other run's at a shape only it has (same entry, target and dtype, one each:
    a rerun at another shape), matched kernel for kernel by place in the graph, sizes aside."""
    changes: list[KernelChange] = []
    worse: list[str] = []
    for key in sorted(base.keys() & new.keys()):
        changes += _kernel_changes(key, base[key].kernels, new[key].kernels)
        worse += _worse_builds(key, base[key].kernels, new[key].kernels)
    paired = _across_shapes(base.keys() - new.keys(), new.keys() - base.keys())
    for old_key, new_key in paired:
        key = (new_key[0], new_key[1], f"{old_key[2]} -> {new_key[2]}", new_key[3])
        changes += _kernel_changes(key, base[old_key].kernels, new[new_key].kernels, sizes_aside=True)
    done_base, done_new = {p[0] for p in paired}, {p[1] for p in paired}
    return CompiledComparison(
        _torch(base.values()),
        _torch(new.values()),
        tuple(changes),
        tuple(worse),
        tuple(_label(k) for k in sorted(base.keys() - new.keys() - done_base)),
        tuple(_label(k) for k in sorted(new.keys() - base.keys() - done_new)),
        tuple((_label(a), _label(b)) for a, b in paired),
    )


def moved_graphs(base: Iterable[Record], new: Iterable[Record]) -> list[tuple[Key, Key]]:
    """(base key, new key) of each compiled entry's graph the other run has at another shape only (what
    :func:`compare` pairs kernel for kernel): from the records' keys alone, for the record-level comparison, which
    leaves these records to the graphs' comparison instead of listing them as removed and added."""

    before, after = graph_keys(base), graph_keys(new)
    return _across_shapes(before - after, after - before)


def graph_keys(records: Iterable[Record]) -> set[Key]:
    """The (entry, target, shape, dtype) of each compiled graph the records hold."""
    return {
        (r.inductor.entry, r.target, r.shape_id, r.dtype)
        for r in records
        if r.inductor.entry is not None and r.mode == "compile" and r.environment == "default"
    }


def _across_shapes(only_base: set[Key], only_new: set[Key]) -> list[tuple[Key, Key]]:
    """(base key, new key) for each entry, target and dtype that has one shape only in the base and one only in new."""

    def by_graph(keys: set[Key]) -> dict[tuple[str, str, str], list[Key]]:
        out: dict[tuple[str, str, str], list[Key]] = {}
        for k in keys:
            out.setdefault((k[0], k[1], k[3]), []).append(k)
        return out

    old, new = by_graph(only_base), by_graph(only_new)
    return sorted((old[g][0], new[g][0]) for g in old.keys() & new.keys() if len(old[g]) == len(new[g]) == 1)


def _torch(graphs: Iterable[KernelGraph]) -> str:
    return next((g.torch for g in graphs if g.torch), "unknown")


def _kernel_changes(
    key: Key, before: tuple[GraphKernel, ...], after: tuple[GraphKernel, ...], sizes_aside: bool = False
) -> list[KernelChange]:
    """Matched by place in the graph (a kernel Inductor numbered otherwise is the same kernel, renamed). Across
    shapes (``sizes_aside``) the sources are compared with their numbers masked (sizes are baked into them), and
    the configs, which Inductor lists from the sizes, are not compared."""
    old, new = {k.identity or k.name: k for k in before}, {k.identity or k.name: k for k in after}
    out = [KernelChange(key, old[i].name, "removed") for i in old if i not in new]
    out += [KernelChange(key, new[i].name, "added", (f"{len(new[i].verdicts)} configs",)) for i in new if i not in old]
    for i in (i for i in new if i in old):
        detail = [f"named {old[i].name} before"] if old[i].name != new[i].name else []
        if not sizes_aside:
            detail += [f"config removed {c}" for c in old[i].configs if c not in new[i].configs]
            detail += [f"config added {c}" for c in new[i].configs if c not in old[i].configs]
        if old[i].source_sha256 != new[i].source_sha256:
            if not sizes_aside:
                detail += _source_detail(old[i].source, new[i].source)
            elif _sized(old[i].source) != _sized(new[i].source):
                detail += _source_detail(_sized(old[i].source), _sized(new[i].source))
        if detail:
            out.append(KernelChange(key, new[i].name, "changed", tuple(detail)))
    order_before = [k.identity or k.name for k in before if (k.identity or k.name) in new]
    order_after = [k.identity or k.name for k in after if (k.identity or k.name) in old]
    if order_before != order_after:
        out.append(KernelChange(key, "(launch order)", "changed", (f"{order_before} -> {order_after}",)))
    return out


def _sized(source: str) -> str:
    """A module's text with its numbers masked: what is left when the sizes baked into it are set aside (the device
    properties, hashes and sizes Inductor writes are all numbers)."""
    import re

    return re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", source)


def _source_detail(before: str, after: str) -> list[str]:
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    body = [ln for ln in diff if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    added, removed = sum(ln.startswith("+") for ln in body), sum(ln.startswith("-") for ln in body)
    shown = [ln for ln in body if ln.startswith("-")][:4] + [ln for ln in body if ln.startswith("+")][:4]
    return [f"source: +{added} -{removed} lines"] + [f"  {ln}" for ln in shown]  # whole: a renderer wraps them


def _worse_builds(key: Key, before: tuple[GraphKernel, ...], after: tuple[GraphKernel, ...]) -> list[str]:
    def index(kernels: tuple[GraphKernel, ...]) -> dict[tuple[str, str], tuple[str, Verdict]]:
        return {(k.identity or k.name, v.config): (k.name, v) for k in kernels for v in k.verdicts}

    old, new = index(before), index(after)
    return [
        f"{_label(key)}: {new[k][0]} {k[1]} built and fit before, now: {new[k][1].why}"
        for k in sorted(old.keys() & new.keys())
        if old[k][1].fits and not new[k][1].fits
    ]
