"""report.html's first screen: the answer before the tables (:mod:`harness.analysis.overview`).

A heatmap of kernels x targets (each cell the share of the kernel's configs that fit, are at risk, exceed a limit
or failed on that target, counted by config), each kernel's configs by portability (fits both, one vendor only,
neither), the worst findings with the reason that decided each, and a legend that decodes config ids and names
each target's limits. Formatting only: the counts come from the analysis.
"""

from __future__ import annotations

from harness.analysis.overview import Overview
from harness.model import targets
from harness.model.ids import option_abbreviations
from harness.render.escaping import html_text

# verdict -> the colour its share paints (RGB); a cell mixes them by share, so green reads "all fit" at a glance
COLOURS = {"fits": (46, 160, 67), "at risk": (230, 170, 20), "exceeds": (215, 58, 73), "failed": (120, 20, 30),
           "incomplete": (150, 150, 150)}  # fmt: skip
SHORT = {"fits": "fit", "at risk": "risk", "exceeds": "exceed", "failed": "failed", "incomplete": "incomplete"}

STYLE = """
.glance{display:flex;gap:2em;align-items:flex-start;flex-wrap:wrap}.glance>div.worst{flex:1 1 28em}
table.heat td.h{min-width:7em;text-align:center;color:#111}
table.heat td.h small{display:block;color:#333}
.worst h3{margin-top:0}.worst li{margin:.2em 0;font-size:13px}.legend{font-size:13px;color:#444}
"""


_e = html_text


def _colour(shares: dict[str, float]) -> str:
    """A light background mixing each verdict's colour by its share (white where nothing was counted)."""
    if not shares:
        return "#fff"
    rgb = [sum(COLOURS[v][i] * s for v, s in shares.items()) for i in range(3)]
    light = [round(255 - 0.45 * (255 - c)) for c in rgb]  # pale enough for dark text
    return "#" + "".join(f"{c:02x}" for c in light)


def section(ov: Overview) -> list[str]:
    if not ov.cells:
        return []
    head = "".join(f"<th>{_e(c)}</th>" for c in ov.columns)
    rows = []
    for kernel in ov.kernels:
        cells = []
        for column in ov.columns:
            cell = ov.cell(kernel, column)
            if cell is None:
                cells.append("<td></td>")
                continue
            shares = {v: cell.share(v) for v, _ in cell.counts}
            fit = dict(cell.counts).get("fits", 0)
            said = ", ".join(f"{n} {SHORT[v]}" for v, n in cell.counts)
            cells.append(
                f'<td class=h style="background:{_colour(shares)}" title="{_e(said)}">'
                f"{fit}/{cell.total} fit<small>{_e(said)}</small></td>"
            )
        split = dict(ov.categories).get(kernel, ())
        portability = ", ".join(f"{n} {c}" for c, n in split)
        rows.append(f"<tr><th>{_e(kernel)}</th>{''.join(cells)}<td>{_e(portability)}</td></tr>")
    table = (
        "<table class=heat><tr><th>kernel</th>" + head + "<th>configs by portability</th></tr>" + "".join(rows)
        + "</table>"
    )  # fmt: skip
    worst = "".join(
        f"<li><b>{_e(w.kernel)}</b> {_e(w.label)}: <b>{_e(w.category)}</b>" + (f" — {_e(w.reason)}" if w.reason else "")
        + "</li>"
        for w in ov.worst
    )  # fmt: skip
    findings = f"<div class=worst><h3>Worst findings</h3><ol>{worst}</ol></div>" if worst else ""
    return [
        "<h2>At a glance</h2>",
        "<p class=note>Per kernel and target: of its configs (each binary once), how many fit under Triton's "
        "defaults; the colour mixes fit (green), at risk (amber), exceed (red) and failed (dark red) by share.</p>",
        f"<div class=glance><div>{table}</div>{findings}</div>",
    ]


def legend(ov: Overview) -> list[str]:
    """Config ids decoded, and each target's limits the verdicts are checked against."""
    opts = ", ".join(f"<code>{_e(short)}</code> {_e(opt)}" for opt, short in option_abbreviations().items())
    limits = []
    for column in ov.columns:
        name = column.split("@", 1)[0]
        try:
            t = targets.get(name)
        except Exception:  # noqa: BLE001 - a column the catalogue does not know is named without limits
            continue
        per = "per workgroup (LDS)" if t.vendor == "amd" else "per block"
        limits.append(
            f"<li>{_e(column)} ({_e(t.arch)}): shared memory {t.shared_per_block // 1024} KiB {per}, "
            f"{t.max_threads_per_block} threads per block, {t.max_regs_per_thread} registers per thread, "
            f"warp of {t.warp_size}</li>"
        )
    return [
        "<div class=legend><h3>Legend</h3>",
        "<p>Config ids: <code>M128_N64_K32</code> are the block sizes <code>BLOCK_M</code>, <code>BLOCK_N</code>, "
        f"<code>BLOCK_K</code>; other tunables by name (<code>GROUP_M8</code>); compile options: {opts}.</p>",
        "<p>Limits checked (the target catalogue, <code>harness targets --sources</code>):</p><ul>"
        + "".join(dict.fromkeys(limits))
        + "</ul></div>",
    ]
