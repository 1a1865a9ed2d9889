"""Where TorchInductor adapts to the vendor: per compiled entry, shape and dtype, each target's kernel graph (the
kernels the compiled wrapper launches, in order, and the configs Inductor's heuristics list for each), what differs
between the targets, and the findings of the builds (configs over a limit, spills, failed compiles).

Works on a run's records (a ``compiled:`` section of a run matrix, or ``harness compiled``, which is such a run:
:func:`of_records`); decides nothing about rendering.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Mapping

from harness.analysis import gate
from harness.analysis.gate import FindingCounts
from harness.analysis.rows import build_rows
from harness.model.ids import config_id
from harness.model.records import Record


@dataclass(frozen=True)
class Graph:
    """One target's kernel graph for one entry, shape and dtype: (kernel, heuristic, configs) in launch order."""

    target: str
    kernels: tuple[tuple[str, str, int], ...]
    choices: int  # template choices max-autotune listed (0 without it)


@dataclass(frozen=True)
class Adaptation:
    """One entry at one shape and dtype across targets: each graph, the differences in words, the findings."""

    entry: str
    shape: str
    dtype: str
    graphs: tuple[Graph, ...]
    differences: tuple[str, ...]
    findings: tuple[str, ...]
    counts: FindingCounts | None = None  # its configs by finding kind, counted as the run's last line counts them


def of_records(records: Iterable[Record]) -> list[Adaptation]:
    """From a run's records (or a merge's): one :class:`Adaptation` per compiled entry, shape, dtype, Triton and
    torch version (hosts that ran other torch releases are never mixed into one graph), each target's graph as its
    records say (under Triton's defaults; configs counted per kernel as Inductor listed them)."""
    Key = tuple[str, str, str, str, str]
    graphs: dict[Key, dict[str, tuple[str, ...]]] = {}
    choices: dict[tuple[str, ...], int] = {}
    kernels: dict[tuple[str, ...], dict[str, tuple[str, int]]] = {}
    findings: dict[Key, list[str]] = {}
    grouped: dict[Key, list[Record]] = {}
    for r in records:
        if r.inductor.entry is None or r.mode != "compile" or r.environment != "default":
            continue
        key = (r.inductor.entry, r.shape_id, r.dtype, r.triton, str(r.inductor.torch or ""))
        grouped.setdefault(key, []).append(r)
        graphs.setdefault(key, {}).setdefault(r.target, tuple(r.inductor.graph or ()))
        choices.setdefault(key + (r.target,), int(r.inductor.choices or 0))
        name = r.inductor.kernel or r.kernel
        per = kernels.setdefault(key + (r.target,), {})
        heuristic, seen = per.get(name, (r.inductor.heuristic or "?", 0))
        per[name] = (heuristic, seen + 1)
        where = f"{r.target} {name} {config_id(r.config)}"
        if r.status != "ok":
            said = " ".join((r.error or "").split())[:200]
            findings.setdefault(key, []).append(f"{where}: compile {r.status}: {said}")
        for flag in r.flags:
            said = f"{flag.resource} {flag.value:g} against a limit of {flag.limit:g} ({flag.severity})"
            findings.setdefault(key, []).append(f"{where}: {said}")
    out = []
    versions = {k[3:] for k in graphs}
    for key in sorted(graphs):
        entry, shape, dtype, triton, torch = key
        made = tuple(
            Graph(target, tuple(_kernel(n, kernels[key + (target,)]) for n in graph), choices[key + (target,)])
            for target, graph in sorted(graphs[key].items())
        )
        label = shape if len(versions) == 1 else f"{shape} triton{triton} torch{torch}"
        counts = gate.count(build_rows(grouped[key]))
        out.append(
            Adaptation(entry, label, dtype, made, tuple(_differences(made)), tuple(findings.get(key, ())), counts)
        )
    return out


def _differences(graphs: tuple[Graph, ...]) -> list[str]:
    if len(graphs) < 2:
        return []
    said = []
    counts = {g.target: len(g.kernels) for g in graphs}
    if len(set(counts.values())) > 1:
        said.append("kernels: " + ", ".join(f"{t} {n}" for t, n in counts.items()))
    names = {g.target: [k[0] for k in g.kernels] for g in graphs}
    if len(set(counts.values())) == 1 and len({tuple(v) for v in names.values()}) > 1:
        said.append("kernel names differ: " + "; ".join(f"{t} {', '.join(v)}" for t, v in names.items()))
    first = graphs[0]
    for g in graphs[1:]:
        for (name, _, n), (other, _, m) in zip(first.kernels, g.kernels):
            if name == other and n != m:
                said.append(f"{name}: configs {first.target} {n}, {g.target} {m}")
    choices = {g.target: g.choices for g in graphs}
    if len(set(choices.values())) > 1:
        said.append("max-autotune choices: " + ", ".join(f"{t} {n}" for t, n in choices.items()))
    return said


def _kernel(name: str, seen: Mapping[str, tuple[str, int]]) -> tuple[str, str, int]:
    # a kernel of the graph with no record here: a -k selection, a shard or a cut run left it out
    heuristic, configs = seen.get(name, ("not in these records", 0))
    return name, heuristic, configs


def policies_of(records: Iterable[Record]) -> tuple[str, ...]:
    """The named policies the compiled kernels' records say stood in for a GPU's timing (in their order)."""
    seen: dict[str, None] = {}
    for r in records:
        seen.update(dict.fromkeys(r.inductor.policies or ()))
    return tuple(seen)
