"""report.html's first screen: the answer before the tables (:mod:`harness.analysis.overview`).

A heatmap of kernels x targets (each cell the share of the kernel's configs that fit, are at risk, exceed a limit
or failed on that target, counted by config), each kernel's configs by portability (fits both, one vendor only,
neither), the worst findings with the reason that decided each, and a legend that decodes config ids and names
each target's limits. Formatting only, as plain data for the page's template (templates/report.html.j2): the counts
come from the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.analysis.overview import Overview
from harness.model import targets
from harness.model.ids import option_abbreviations

# verdict -> the colour its share paints (RGB); a cell mixes them by share, so green reads "all fit" at a glance
COLOURS = {"fits": (46, 160, 67), "spills": (240, 140, 40), "at risk": (230, 170, 20), "exceeds": (215, 58, 73), "failed": (120, 20, 30),
           "incomplete": (150, 150, 150)}  # fmt: skip
SHORT = {
    "fits": "fit",
    "spills": "spill",
    "at risk": "risk",
    "exceeds": "exceed",
    "failed": "failed",
    "incomplete": "incomplete",
}

STYLE = """
.glance{display:flex;gap:2em;align-items:flex-start;flex-wrap:wrap}.glance>div.worst{flex:1 1 28em}
table.heat td.h{min-width:7em;text-align:center;color:#111}
table.heat td.h small{display:block;color:#333}
.worst h3{margin-top:0}.worst li{margin:.2em 0;font-size:13px}.legend{font-size:13px;color:#444}
"""


def _colour(shares: dict[str, float]) -> str:
    """A light background mixing each verdict's colour by its share (white where nothing was counted)."""
    if not shares:
        return "#fff"
    rgb = [sum(COLOURS[v][i] * s for v, s in shares.items()) for i in range(3)]
    light = [round(255 - 0.45 * (255 - c)) for c in rgb]  # pale enough for dark text
    return "#" + "".join(f"{c:02x}" for c in light)


@dataclass(frozen=True)
class HeatCell:
    colour: str
    fit: int
    total: int
    said: str  # "3 fit, 1 exceed"


@dataclass(frozen=True)
class HeatRow:
    kernel: str
    cells: tuple[HeatCell | None, ...]
    portability: str


@dataclass(frozen=True)
class Glance:
    columns: tuple[str, ...]
    rows: tuple[HeatRow, ...]
    worst: tuple[Any, ...]  # the analysis's worst findings (kernel, label, category, reason)


@dataclass(frozen=True)
class Legend:
    options: tuple[tuple[str, str], ...]  # (abbreviation, option)
    limits: tuple[str, ...]  # per target column


def section(ov: Overview) -> Glance | None:
    if not ov.cells:
        return None
    rows = []
    for kernel in ov.kernels:
        cells: list[HeatCell | None] = []
        for column in ov.columns:
            cell = ov.cell(kernel, column)
            if cell is None:
                cells.append(None)
                continue
            shares = {v: cell.share(v) for v, _ in cell.counts}
            said = ", ".join(f"{n} {SHORT[v]}" for v, n in cell.counts)
            cells.append(HeatCell(_colour(shares), dict(cell.counts).get("fits", 0), cell.total, said))
        split = dict(ov.categories).get(kernel, ())
        rows.append(HeatRow(kernel, tuple(cells), ", ".join(f"{n} {c}" for c, n in split)))
    return Glance(tuple(ov.columns), tuple(rows), tuple(ov.worst))


def legend(ov: Overview) -> Legend:
    """Config ids decoded, and each target's limits the verdicts are checked against."""
    limits = []
    for column in ov.columns:
        name = column.split("@", 1)[0]
        try:
            t = targets.get(name)
        except Exception:  # noqa: BLE001 - a column the catalogue does not know is named without limits
            continue
        per = "per workgroup (LDS)" if t.vendor == "amd" else "per block"
        limits.append(
            f"{column} ({t.arch}): shared memory {t.shared_per_block // 1024} KiB {per}, "
            f"{t.max_threads_per_block} threads per block, {t.max_regs_per_thread} registers per thread, "
            f"warp of {t.warp_size}"
        )
    options = tuple((short, opt) for opt, short in option_abbreviations().items())
    return Legend(options, tuple(dict.fromkeys(limits)))
