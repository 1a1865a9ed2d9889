"""report.html's per-kernel tables: every config row x target column with its verdict, each verdict linking that
target's own artifact folder (PTX / cubin for an NVIDIA column, AMDGCN / hsaco for an AMD one), configs in numeric
order (``K32`` before ``K128``), counts by config. Plain data for the page's template (templates/report.html.j2),
which escapes it."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from harness.analysis.rows import Row
from harness.render import tables as md_tables
from harness.render.text_table import natural

CLASS = {
    "fits": "fits",
    "spills": "spills",
    "at risk": "at-risk",
    "exceeds": "exceeds",
    "failed": "failed",
    "incomplete": "incomplete",
}


def _folder(rec: Any) -> str | None:
    """The artifact folder of one build, relative to the page (artifact paths are the run's own, or as
    ``harness report`` rebased them), or None without artifacts."""
    path = next((a.path for a in rec.artifacts.values() if a.path), None) if rec is not None else None
    return quote(str(path).rsplit("/", 1)[0]) + "/" if path else None


def _figures(rec: Any) -> str:
    """A build's figures as report.md's columns say them (smem B, regs, spill B, occ), then its MMA count."""
    if rec is None or rec.status != "ok":
        return ""
    _, smem, regs, spill, occ = md_tables.cell_texts(rec, None)
    res = rec.resources
    mma = next((f"{n} {k}" for k in ("wgmma", "mma", "tcgen05_mma", "mfma") if (n := getattr(res, k, None))), "0 MMA")
    return " · ".join(x for x in (smem, f"{regs} regs" if regs else "", f"spill {spill}", occ, mma) if x)


@dataclass(frozen=True)
class Cell:
    """One target's verdict of one config: its class, the reasons (the hover title), its artifact folder."""

    css: str
    verdict: str
    reasons: str
    href: str | None
    figures: str


@dataclass(frozen=True)
class ConfigRow:
    head: tuple[str, ...]  # dtype, shape, triton, config, space, cpu interp
    cells: tuple[Cell | None, ...]  # per target column
    text: str  # the portability verdict


@dataclass(frozen=True)
class KernelTable:
    kernel: str
    summary: str
    targets: tuple[str, ...]
    rows: tuple[ConfigRow, ...]


def tables(rows: list[Row]) -> list[KernelTable]:
    """Per kernel (by name), its configs in numeric order with each target's cell."""
    out = []
    by_kernel: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_kernel[row.kernel].append(row)
    for kernel in sorted(by_kernel):
        krows = sorted(
            by_kernel[kernel], key=lambda r: (r.dtype, natural(r.shape_id), natural(r.triton), natural(r.config_id))
        )
        targets = sorted({t for r in krows for t in r.judged.targets})
        configs = [r for r in krows if not r.judged.duplicate]  # a config built into another's binary: that one
        counts = Counter(r.judged.category for r in configs)
        summary = f"{len(configs)} config(s): " + ", ".join(f"{n} {c}" for c, n in counts.most_common())
        table = []
        for r in krows:
            cells: list[Cell | None] = []
            for t in targets:
                tv = r.judged.targets.get(t)
                if tv is None:
                    cells.append(None)
                    continue
                reasons = "; ".join(tv.reasons) + (f" (same binary as {tv.duplicate_of})" if tv.duplicate_of else "")
                # this target's own build: its PTX / cubin or AMDGCN / hsaco
                cells.append(
                    Cell(CLASS[tv.verdict], tv.verdict, reasons, _folder(tv.decided_by), _figures(tv.decided_by))
                )
            head = (r.dtype, r.shape_id, r.triton, r.config_id, r.origin, r.check)
            table.append(ConfigRow(head, tuple(cells), r.judged.text))
        out.append(KernelTable(kernel, summary, tuple(targets), tuple(table)))
    return out
