"""report.html: one self-contained file for people who never open a terminal.

No network to view it: the styles are inline and the charts are SVG written here (bars, no
JavaScript). Sections: the runs (matrix, host, GPUs, versions, commit, when), verdict counts, the
portability matrix per kernel (every config × target column, the verdict with value against limit,
the reasons on hover), and per kernel that ran on a GPU a chart of the winner's achieved rate against
its baselines. Every string that came from a matrix, a kernel or a record goes through ``html.escape``.
"""
from __future__ import annotations

import html
from collections import Counter, defaultdict
from typing import Any

from harness import report
from harness.records import Record

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}
td.fits{background:#e6f4ea}td.at-risk{background:#fff4d6}td.exceeds{background:#fde2e1}td.failed{background:#f5c6cb}
h2{margin-top:1.5em}.note{color:#666}
"""
CLASS = {"fits": "fits", "at risk": "at-risk", "exceeds": "exceeds", "failed": "failed"}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _runs(runs: list[dict[str, Any]]) -> list[str]:
    out = ["<h2>Runs</h2>", "<table><tr><th>matrix</th><th>host</th><th>GPUs</th><th>triton</th><th>torch</th>"
           "<th>commit</th><th>start</th><th>end</th></tr>"]
    for info in runs:
        cells = [(info.get("matrix") or {}).get("name"), info.get("host"), ", ".join(info.get("gpus") or []) or "none",
                 info.get("triton"), info.get("torch"), info.get("commit") or "-", info.get("start"),
                 info.get("end") or "INCOMPLETE"]
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    return out + ["</table>"]


def _matrix(rows: list[report.Row]) -> list[str]:
    out = ["<h2>Portability</h2>",
           "<p class=note>Per target, the verdict of its build under Triton's defaults; at risk: it fits by default "
           "but not under a swept compile environment. Hover a cell for the reasons.</p>"]
    by_kernel: dict[str, list[report.Row]] = defaultdict(list)
    for row in rows:
        by_kernel[row.kernel].append(row)
    for kernel in sorted(by_kernel):
        krows = sorted(by_kernel[kernel], key=lambda r: (r.dtype, r.shape_id, r.triton, r.config_id))
        targets = sorted({t for r in krows for t in r.judged.targets})
        counts = Counter(tv.verdict for r in krows for tv in r.judged.targets.values())
        summary = ", ".join(f"{counts[v]} {v}" for v in ("fits", "at risk", "exceeds", "failed") if counts[v])
        out.append(f"<h3>{_e(kernel)}</h3><p class=note>{_e(summary)}</p>")
        out.append("<table><tr><th>dtype</th><th>shape</th><th>triton</th><th>config</th>"
                   + "".join(f"<th>{_e(t)}</th>" for t in targets) + "<th>portability</th></tr>")
        for r in krows:
            cells = []
            for t in targets:
                tv = r.judged.targets.get(t)
                if tv is None:
                    cells.append("<td></td>")
                    continue
                reasons = "; ".join(tv.reasons)
                cells.append(f"<td class={CLASS[tv.verdict]} title=\"{_e(reasons)}\">{_e(tv.verdict)}"
                             + (f"<br><small>{_e(reasons[:80])}</small>" if reasons else "") + "</td>")
            out.append(f"<tr><td>{_e(r.dtype)}</td><td>{_e(r.shape_id)}</td><td>{_e(r.triton)}</td>"
                       f"<td>{_e(r.config_id)}</td>" + "".join(cells) + f"<td>{_e(r.judged.text)}</td></tr>")
        out.append("</table>")
    return out


def bar_chart(title: str, bars: list[tuple[str, float]], unit: str, width: int = 640) -> str:
    """A horizontal bar chart as inline SVG (labels escaped)."""
    top = max((v for _, v in bars), default=0.0) or 1.0
    height, label_w = 22 * len(bars) + 30, 260
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{_e(title)}"><title>{_e(title)}</title>',
             f'<text x="0" y="14" font-size="13" font-weight="bold">{_e(title)}</text>']
    for i, (label, value) in enumerate(bars):
        y = 24 + 22 * i
        w = max(1.0, (width - label_w - 90) * value / top)
        parts.append(f'<text x="0" y="{y + 14}" font-size="12">{_e(label[:40])}</text>')
        colour = "#3b7dd8" if i else "#1b5e20"
        parts.append(f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="16" fill="{colour}"/>')
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 14}" font-size="12">{value:.3g} {_e(unit)}</text>')
    return "".join(parts) + "</svg>"


def _charts(records: list[Record]) -> list[str]:
    tunes = [r for r in records if r.mode == "tune" and r.status == "ok" and isinstance(r.runtime, dict)]
    if not tunes:
        return []
    out = ["<h2>On the device</h2>",
           "<p class=note>Per tuned case: the winner (green) against each baseline, median time as a rate "
           "(TFLOP/s when the kernel has a FLOP model, else GB/s).</p>"]
    for t in sorted(tunes, key=lambda r: (r.kernel, r.dtype, r.shape_id, r.target)):
        rt = t.runtime
        use_flops = bool(rt.get("tflops"))
        unit, key = ("TFLOP/s", "tflops") if use_flops else ("GB/s", "gbps")
        bars = [(f"{t.config_id} (winner)", float(rt.get(key) or 0.0))]
        for name, b in (rt.get("baselines") or {}).items():
            if isinstance(b, dict) and b.get("status") == "ok" and b.get(key):
                bars.append((name, float(b[key])))
        out.append(bar_chart(f"{t.kernel} {t.dtype} {t.shape_id} on {t.target}", bars, unit))
    return out


def html_report(runs: list[dict[str, Any]], records: list[Record]) -> str:
    rows = report.build_rows(records)
    body = ["<h1>Triton portability report</h1>"] + _runs(runs) + _matrix(rows) + _charts(records)
    fails = report.failures(records)
    if fails:
        body += ["<h2>Failures</h2>", "<ul>"] + [f"<li>{_e(line)}</li>" for line in fails[:200]] + ["</ul>"]
    body.append("<p class=note>Data: results.json and records.jsonl beside this file; artifacts under artifacts/."
                "</p>")
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>Triton portability report</title>"
            f"<style>{STYLE}</style></head><body>" + "\n".join(body) + "</body></html>\n")
