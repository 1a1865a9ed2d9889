"""The answer first: what report.html's first screen shows, decided once from the config rows.

Per kernel and target column, how many *configs* (not cells: a config built into another config's binary counts
once, as the terminal counts) fit, are at risk, exceed a limit, failed or are incomplete; per kernel, how many
configs fit both vendors, one vendor only, or neither (the portability categories report.md's summary has); and the
worst findings — configs that fit one vendor only, then those that exceed or fail everywhere — each with the
reason that decided it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis import verdicts
from harness.analysis.rows import Row

SEVERITY = {"AMD only": 0, "NVIDIA only": 0, "mixed": 1, "fits neither": 2, "exceeds a limit": 2, "failed": 3}


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
    reason: str  # the first target's reason that decided it


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
    bad: list[tuple[int, Worst]] = []
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
            reason = next((r for tv in row.judged.targets.values() for r in tv.reasons), "")
            label = f"{row.dtype} {row.shape_id} {row.config_id}" + (f" (triton {row.triton})" if several else "")
            bad.append((SEVERITY[category], Worst(row.kernel, label, category, reason)))
    kernels = tuple(sorted(set(per_kernel) | {k for k, _ in per_cell}))
    columns = tuple(sorted({c for _, c in per_cell}))
    cells = tuple(
        Cell(k, c, tuple((v, per_cell[(k, c)][v]) for v in verdicts.VERDICTS if per_cell[(k, c)][v]))
        for k in kernels
        for c in columns
        if (k, c) in per_cell
    )
    categories = tuple((k, tuple(sorted(per_kernel[k].items(), key=lambda kv: -kv[1]))) for k in kernels)
    ranked = [w for _, w in sorted(bad, key=lambda t: (t[0], t[1].kernel, t[1].label))]
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
