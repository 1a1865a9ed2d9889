"""Where TorchInductor adapts to the vendor: per compiled entry, shape and dtype, each target's kernel graph (the
kernels the compiled wrapper launches, in order, and the configs Inductor's heuristics list for each), what differs
between the targets, and the findings of the builds (configs over a limit, spills, failed compiles).

Works on the tables ``harness compiled`` writes (compiled.json); decides nothing about rendering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


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


def _shape(shape: Mapping[str, Any]) -> str:
    return "x".join(f"{k}{v}" for k, v in shape.items())


def adaptations(doc: Mapping[str, Any]) -> list[Adaptation]:
    """From compiled.json: one :class:`Adaptation` per entry, shape and dtype captured on at least one target."""
    out = []
    for entry, by_target in doc.get("entries", {}).items():
        keyed: dict[tuple[str, str], list[tuple[str, Mapping[str, Any]]]] = {}
        for target, captured in by_target.items():
            for row in captured.get("tables", []):
                if isinstance(row.get("table"), dict):
                    keyed.setdefault((_shape(row["shape"]), row["dtype"]), []).append((target, row))
        for (shape, dtype), rows in keyed.items():
            graphs = tuple(_graph(target, row["table"]) for target, row in rows)
            findings = tuple(f for target, row in rows for f in _findings(target, row))
            out.append(Adaptation(entry, shape, dtype, graphs, tuple(_differences(graphs)), findings))
    return out


def _graph(target: str, table: Mapping[str, Any]) -> Graph:
    kernels = tuple((k["name"], k["heuristic"], len(k["configs"])) for k in table["kernels"])
    return Graph(target, kernels, sum(len(c["choices"]) for c in table.get("choices", [])))


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
                said.append(f"{name}: {first.target} {n} configs, {g.target} {m}")
    choices = {g.target: g.choices for g in graphs}
    if len(set(choices.values())) > 1:
        said.append("max-autotune choices: " + ", ".join(f"{t} {n}" for t, n in choices.items()))
    return said


def _findings(target: str, row: Mapping[str, Any]) -> list[str]:
    out = []
    for build in row.get("builds", []):
        where = f"{target} {build['kernel']} {build['config']}"
        if build.get("error"):
            out.append(f"{where}: compile failed: {build['error']}")
        for flag in build.get("flags", []):
            out.append(f"{where}: {flag['resource']} {flag['value']} over {flag['limit']} ({flag['severity']})")
    return out
