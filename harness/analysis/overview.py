"""The answer first: what report.html's first screen shows, decided once from the config rows.

Per kernel and target column, how many *configs* (not cells: a config built into another config's binary counts
once, as the terminal counts) fit, are at risk, exceed a limit, failed or are incomplete; per kernel, how many
configs fit both vendors, one vendor only, or neither (the portability categories report.md's summary has); and the
worst findings — configs that failed to build or check, then those that fit one vendor only, then those that
exceed a limit everywhere — each with the target and the reason that decided it. Findings of one kernel, category
and kind of reason are one line ("12 configs … shared 73,728–147,456 > 65,536"), not twelve.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis import verdicts
from harness.analysis.rows import Row

SEVERITY = {"failed": 0, "AMD only": 1, "NVIDIA only": 1, "mixed": 2, "fits neither": 3, "exceeds a limit": 3}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Cell:
    """One kernel on one target column: configs by verdict."""

    kernel: str
    column: str
    counts: tuple[tuple[str, int], ...]  # (verdict, configs), in verdicts.VERDICTS order

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)

    def share(self, verdict: str) -> float:
        return dict(self.counts).get(verdict, 0) / self.total if self.total else 0.0


@dataclass(frozen=True)
class Worst:
    kernel: str
    label: str  # dtype shape config (triton)
    category: str  # the row's portability category
    reason: str  # the first target's reason that decided it, "target: reason"
    count: int = 1  # configs this line stands for (a group: one kernel, category and kind of reason)


@dataclass(frozen=True)
class Overview:
    kernels: tuple[str, ...]
    columns: tuple[str, ...]
    cells: tuple[Cell, ...]
    categories: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # kernel -> (category, configs)
    worst: tuple[Worst, ...]

    def cell(self, kernel: str, column: str) -> Cell | None:
        return next((c for c in self.cells if c.kernel == kernel and c.column == column), None)


def overview(rows: Sequence[Row], worst: int = 12) -> Overview:
    per_cell: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    per_kernel: dict[str, Counter[str]] = defaultdict(Counter)
    bad: list[tuple[int, _Bad]] = []
    several = len({row.triton for row in rows}) > 1
    for row in rows:
        for column, tv in row.judged.targets.items():
            if not tv.duplicate_of:  # a config that is another config's binary is that config
                per_cell[(row.kernel, column)][tv.verdict] += 1
        if row.judged.duplicate:
            continue
        category = row.judged.category
        per_kernel[row.kernel][category] += 1
        if category in SEVERITY:
            # the worst target's reason decided it (an exceeding target's, not a spilling one's beside it)
            worst_first = sorted(row.judged.targets.items(), key=lambda kv: -verdicts.VERDICTS.index(kv[1].verdict))
            reason = next((f"{col}: {r}" for col, tv in worst_first for r in tv.reasons), "")
            triton = f" (triton {row.triton})" if several else ""
            bad.append(
                (SEVERITY[category], _Bad(row.kernel, category, reason, row.dtype, row.shape_id, row.config_id, triton))
            )
    kernels = tuple(sorted(set(per_kernel) | {k for k, _ in per_cell}))
    columns = tuple(sorted({c for _, c in per_cell}))
    cells = tuple(
        Cell(k, c, tuple((v, per_cell[(k, c)][v]) for v in verdicts.VERDICTS if per_cell[(k, c)][v]))
        for k in kernels
        for c in columns
        if (k, c) in per_cell
    )
    categories = tuple((k, tuple(sorted(per_kernel[k].items(), key=lambda kv: -kv[1]))) for k in kernels)
    ranked = [w for _, w in sorted(_grouped(bad), key=lambda t: (t[0], t[1].kernel, -t[1].count, t[1].label))]
    return Overview(kernels, columns, cells, categories, tuple(_in_turns(ranked)[:worst]))


def _in_turns(ranked: list[Worst]) -> list[Worst]:
    """The worst findings a kernel at a time, in turns, so that one kernel's many do not hide the others'."""
    queues: dict[str, list[Worst]] = defaultdict(list)
    for w in ranked:
        queues[w.kernel].append(w)
    out: list[Worst] = []
    while any(queues.values()):
        for kernel in list(queues):
            if queues[kernel]:
                out.append(queues[kernel].pop(0))
    return out


@dataclass(frozen=True)
class _Bad:
    kernel: str
    category: str
    reason: str
    dtype: str
    shape: str
    config: str
    triton: str  # " (triton X)" when the rows hold several versions


def _grouped(bad: list[tuple[int, _Bad]]) -> list[tuple[int, Worst]]:
    """One line per kernel, category and reason with its numbers left out; a group's numbers become ranges."""
    groups: dict[tuple[int, str, str, str], list[_Bad]] = defaultdict(list)
    for severity, b in bad:
        groups[(severity, b.kernel, b.category, _NUMBER.sub("#", b.reason))].append(b)
    out = []
    for (severity, kernel, category, template), members in groups.items():
        if len(members) == 1:
            b = members[0]
            out.append((severity, Worst(kernel, f"{b.dtype} {b.shape} {b.config}{b.triton}", category, b.reason)))
            continue
        numbers = [[float(x) for x in _NUMBER.findall(b.reason)] for b in members]
        parts = template.split("#")
        reason = parts[0]
        for i, part in enumerate(parts[1:]):
            lo, hi = min(n[i] for n in numbers), max(n[i] for n in numbers)
            reason += _number(lo) if lo == hi else f"{_number(lo)}–{_number(hi)}"
            reason += part
        out.append((severity, Worst(kernel, _summary(members), category, reason, len(members))))
    return out


def _summary(members: list[_Bad]) -> str:
    """``12 configs: bf16, fp16 · 3 shapes · 4 configs``; a single shape or config is named."""
    dtypes = sorted({b.dtype for b in members})
    shapes = sorted({b.shape for b in members})
    configs = sorted({b.config for b in members})
    tritons = sorted({b.triton for b in members if b.triton})
    said = [", ".join(dtypes), shapes[0] if len(shapes) == 1 else f"{len(shapes)} shapes"]
    said.append(configs[0] if len(configs) == 1 else f"{len(configs)} configs")
    if tritons:
        said.append(tritons[0].strip(" ()") if len(tritons) == 1 else f"{len(tritons)} Triton versions")
    return f"{len(members)} configs: " + " · ".join(said)


def _number(value: float) -> str:
    return f"{int(value):,}" if value == int(value) and abs(value) >= 1000 else f"{value:g}"
