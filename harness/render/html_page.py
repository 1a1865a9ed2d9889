"""report.html: one self-contained file for people who never open a terminal.

No network to view it: the styles are inline and the charts are inline SVG (no JavaScript).
Sections: the runs (matrix, host, GPUs, versions, commit, when); the portability matrix per kernel
(every config × target column, the verdict with value against limit, the reasons on hover); per case
that ran on a GPU, each device's and Triton version's winner with its share of that device's peak
against its baselines, and the tuning-portability penalty; the vendor evaluation; the comparison
between the Triton versions the merge holds; trends from the history file; links to the raw data.
Every string that came from a matrix, a kernel or a record goes through ``html.escape``.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from harness.analysis import figures
from harness.analysis.findings import Findings
from harness.analysis.trends import Trend
from harness.model.run_info import RunInfo
from harness.model.timings import STABLE_IQR
from harness.render import html_matrix, html_overview, run_lines, svg, tables
from harness.render.compare import EXIT_MEANING
from harness.render.escaping import html_text

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}
td.fits{background:#e6f4ea}td.at-risk{background:#fff4d6}td.exceeds{background:#fde2e1}td.failed{background:#f5c6cb}
td.incomplete{background:#e8e8e8;font-style:italic}
h2{margin-top:1.5em}.note{color:#666}
"""


_e = html_text


def _runs(runs: list[RunInfo]) -> list[str]:
    out = [
        "<h2>Runs</h2>",
        "<table><tr><th>matrix</th><th>host</th><th>GPUs</th><th>triton</th><th>torch</th>"
        "<th>commit</th><th>start</th><th>end</th></tr>",
    ]
    for info in runs:
        cells = [
            info.matrix.name if info.matrix else None,
            info.host,
            ", ".join(info.gpus or ()) or "none",
            info.triton,
            info.torch,
            info.commit or "-",
            info.start,
            "INCOMPLETE (interrupted)" if info.interrupted else info.end or "INCOMPLETE",
        ]
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    for info in runs:  # a night of shard runs shown as one run: its shards, and what makes it incomplete
        out += [f"<p class=note>{_e(line)}</p>" for line in run_lines.night_lines(info)]
    return out


def _rooflines(found: Findings) -> list[str]:
    """Per device that ran tuned cases: its roofline, each case's winner (green) and baselines (blue)."""
    if not found.rooflines:
        return []
    out = [
        "<h2>Rooflines</h2>",
        "<p class=note>Per device: each tuned case's winner (green) and its baselines (blue) at the case's "
        "FLOP per byte, in TFLOP/s (a memory-bound rate times its intensity), under the device's HBM roof and "
        "the compute roof of each dtype the cases used (the catalogue's peaks). Hover a point for its case.</p>",
    ]
    for d in found.rooflines:
        points = [(p.label, p.intensity, p.tflops, p.winner) for p in d.points]
        out.append(svg.roofline(f"{d.device}", d.bandwidth_tbps, list(d.compute), points, width=900, height=420))
    return out


def _device_charts(found: Findings) -> list[str]:
    """Per case, one bar per (device, Triton version, host) winner, then its baselines; a second chart of
    the tuning-portability penalty (another target's winner on this device) where one was measured."""
    cases = figures.by_case(list(found.measured))
    if not cases:
        return []
    out = [
        "<h2>On the device</h2>",
        "<p class=note>Per tuned case: each device's winner (green, per Triton version and host) and its "
        "baselines (blue), as a rate against the case's roof — GB/s and the share of the HBM peak when its "
        "FLOP-per-byte is below the device's ridge point (memory-bound), else TFLOP/s and the share of the "
        "peak of its dtype (compute-bound), always the peaks of the device that ran; then the portability "
        "penalty: how much slower another target's "
        "winner (or the other vendor space's best, a proxy) ran on this device.</p>",
    ]
    for (kernel, dtype, shape_id), items in cases.items():
        bars, notes, colours = [], [], []
        for m in items:
            bars.append((f"{m.target} · triton {m.triton} · {m.host}: {m.config_id}", m.rate))
            notes.append(f"{m.roof.bound}-bound, {m.roof.share_text}, {m.method}")
            colours.append(svg.PALETTE[0])
            for name, rate, speedup in m.baselines:
                bars.append((f"  {name} ({m.target}, {m.triton})", rate))
                notes.append(f"speedup of the winner {speedup:.2f}×" if isinstance(speedup, (int, float)) else "")
                colours.append(svg.PALETTE[1])
        out.append(
            svg.bar_chart(
                f"{kernel} {dtype} {shape_id}",
                bars,
                items[0].unit,
                width=1000,
                notes=notes,
                colours=colours,
                text_w=300,
                label_w=460,
            )
        )
        pen = [
            (f"{other} winner on {m.target} ({m.triton})", slowdown, source)
            for m in items
            for other, slowdown, source in m.penalties
        ]
        if pen:
            out.append(
                svg.bar_chart(
                    f"{kernel} {dtype} {shape_id}: portability penalty (× the local winner's time)",
                    [(label, v) for label, v, _ in pen],
                    "×",
                    width=1000,
                    notes=[src[:60] for _, _, src in pen],
                    colours=[svg.PALETTE[2]] * len(pen),
                    text_w=440,
                    label_w=300,
                )
            )
    unstable = found.unstable
    if unstable:
        out.append(
            f"<p class=note>Unstable timings (the middle half of the samples spans more than "
            f"{100 * STABLE_IQR:.0f}% of the median):</p><ul>"
            + "".join(f"<li>{_e(line)}</li>" for line in unstable)
            + "</ul>"
        )
    return out


def _vendor_eval(found: Findings) -> list[str]:
    evals = found.evaluations
    if not evals:
        return []
    if not any(ev.devices for ev in evals):  # a static run: what it can compare, not empty device columns
        from harness.render.vendor_eval import STATIC_NOTE

        rows = "".join(
            "<tr>"
            + "".join(f"<td>{_e(v)}</td>" for v in (ev.kernel, ev.dtype, ev.shape_id, ev.triton))
            + "".join(f"<td>{'<br>'.join(_e(x) for x in lines)}</td>" for lines in ev.static_cells().values())
            + "</tr>"
            for ev in evals
        )
        return [
            "<h2>Vendor comparison (static)</h2>",
            f"<p class=note>{_e(STATIC_NOTE)}</p>",
            "<table><tr><th>kernel</th><th>dtype</th><th>shape</th><th>triton</th><th>per target</th>"
            f"<th>one vendor only</th><th>not fitting</th></tr>{rows}</table>",
        ]
    out = [
        "<h2>Vendor evaluation</h2>",
        "<p class=note>The same kernels tuned separately on each device, on the matrix's shapes; between "
        "devices: time relative to the fastest; a vendor-specific winner does not fit the other targets; one "
        "vendor only: configs of the case that fit one vendor's targets and not the other's; "
        "not fitting: configs of the case that exceed a limit or failed, per target.</p>",
        "<table><tr><th>kernel</th><th>dtype</th><th>shape</th><th>triton</th><th>device: winner, median, "
        "rate, % of peak</th><th>between devices</th><th>winner elsewhere</th><th>one vendor only</th>"
        "<th>static only</th><th>not fitting</th></tr>",
    ]
    for ev in evals:
        cells = ["<br>".join(_e(line) for line in lines) for lines in ev.cells().values()]
        head = [_e(v) for v in (ev.kernel, ev.dtype, ev.shape_id, ev.triton)]
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in head + cells) + "</tr>")
    return out + ["</table>"]


def _version_compare(found: Findings) -> list[str]:
    pairs = found.between_versions
    if not pairs:
        return []
    out = [
        "<h2>Between Triton versions</h2>",
        "<p class=note>The records of each Triton version in this merge against the next version's, by "
        "<code>harness compare</code>'s rules (worse first).</p>",
    ]
    for older, newer, cmp in pairs:
        out.append(f"<h3>{_e(older)} → {_e(newer)}</h3>")
        if cmp.reason:
            out.append(f"<p>{_e(cmp.reason)}</p>")
            continue
        worse = [c for c in cmp.changes if c.worse]
        better = [c for c in cmp.changes if c.better]
        out.append(
            f"<p>{cmp.matched} builds matched; {len(worse)} worse, {len(better)} better, "
            f"{len(cmp.changes) - len(worse) - len(better)} other changes; exit {cmp.exit_code}: "
            f"{_e(EXIT_MEANING[cmp.exit_code])}"
            + (f"<br>{_e(cmp.compile_time.line())}" if cmp.compile_time is not None else "")
            + "</p>"
        )
        shown = sorted(cmp.changes, key=lambda c: (not c.worse, not c.better, c.kind, c.label))[:150]
        if shown:
            out.append(
                "<table><tr><th></th><th>kind</th><th>what</th><th>build</th><th>"
                + _e(older)
                + "</th><th>"
                + _e(newer)
                + "</th><th>detail</th></tr>"
            )
            for c in shown:
                mark = "worse" if c.worse else ("better" if c.better else "")
                cls = " class=exceeds" if c.worse else (" class=fits" if c.better else "")
                out.append(
                    f"<tr><td{cls}>{mark}</td><td>{_e(c.kind)}</td><td>{_e(c.what)}</td><td>{_e(c.label)}"
                    f"</td><td>{_e(c.base)}</td><td>{_e(c.new)}</td><td>{_e(c.detail)}</td></tr>"
                )
            out.append("</table>")
    return out


def _trends(found: Sequence[Trend] | None) -> list[str]:
    if not found:
        return []
    ranked = sorted(found, key=lambda t: (t.step is None, t.series, t.metric))[:40]
    out = [
        "<h2>Trends across nights</h2>",
        f"<p class=note>From the history file: {len(found)} series; those with a step (a shift that lasted) "
        "first, their last nights in red.</p>",
        "<table><tr><th>series</th><th>metric</th><th>nights</th><th>trend</th><th>step</th></tr>",
    ]
    for t in ranked:
        marked = len(t.values) - 2 if t.step is not None else None
        step = "" if t.step is None else ("from zero" if t.step == float("inf") else f"{100 * t.step:+.1f}%")
        out.append(
            f"<tr><td>{_e(t.series)}</td><td>{_e(t.metric)}</td><td>{len(t.values)}</td>"
            f"<td>{svg.sparkline(list(t.values), marked_from=marked)}</td><td>{_e(step)}</td></tr>"
        )
    return out + ["</table>"]


def _data_links(runs: list[RunInfo]) -> list[str]:
    out = ["<h2>Data</h2>", "<ul>"]
    for where in (d for info in runs for d in ((info.night.dirs or ()) if info.night else (info.dir,)) if d):
        href = _e(quote(str(where)))  # a relative URL: every odd character percent-encoded
        out.append(
            f'<li>{_e(where)}: <a href="{href}/results.json">results.json</a>, '
            f'<a href="{href}/records.jsonl">records.jsonl</a>, '
            f'<a href="{href}/artifacts/">artifacts/</a></li>'
        )
    if len(out) == 2:
        out.append("<li>results.json and records.jsonl beside this file; artifacts under artifacts/</li>")
    return out + ["</ul>"]


def html_report(found: Findings) -> str:
    """The page. ``found.runs[i].dir``, when set, is that run's directory relative to the page (links); the
    trend section shows ``found.trends`` (the history file's series) when a history file was given."""
    runs, records, rows = list(found.runs), list(found.records), list(found.rows)
    body = (
        ["<h1>Triton portability report</h1>"]
        + html_overview.section(found.overview)
        + _runs(runs)
        + html_matrix.tables(rows)
        + _device_charts(found)
        + _rooflines(found)
        + _vendor_eval(found)
        + _version_compare(found)
        + _trends(found.trends)
    )
    fails = tables.failures(records)
    if fails:
        body += ["<h2>Failures</h2>", "<ul>"] + [f"<li>{_e(line)}</li>" for line in fails[:200]] + ["</ul>"]
    commands = run_lines.repro_commands(records, run_lines.run_dir(runs))
    if commands:
        body += [
            "<h2>Reproduce</h2>",
            "<p class=note>Each failed or exceeding build as a standalone Triton script:</p>",
        ]
        body += ["<pre>" + "\n".join(_e(c) for c in commands) + "</pre>"]
    body += html_overview.legend(found.overview)
    body += _data_links(runs)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>Triton portability report</title>"
        f"<style>{STYLE}{html_overview.STYLE}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )
