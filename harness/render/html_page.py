"""report.html: one self-contained file for people who never open a terminal.

No network to view it: the styles are inline and the charts are inline SVG (no JavaScript).
Sections: at a glance (the heatmap and the worst findings); the runs (matrix, host, GPUs, versions, commit, when);
the portability matrix per kernel (every config × target column, the verdict with value against limit, the
reasons on hover); per case that ran on a GPU, each device's and Triton version's winner with its share of that
device's peak against its baselines, the tuning-portability penalty and a roofline per device; the vendor
evaluation; the comparison between the Triton versions the merge holds; trends from the history file; the
failures and their reproducers; the legend; links to the raw data.

The page is ``templates/report.html.j2`` rendered by jinja2 with autoescaping: this module only gathers the
values (formatted text, never markup) and the SVG charts, which :mod:`harness.render.svg` escapes as it draws
them and which alone reach the page as ``Markup``. Control characters are dropped from every value
(:data:`harness.render.escaping.CONTROL`), so the page's text copied to a terminal stays inert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from harness.analysis import figures
from harness.analysis.findings import Findings
from harness.analysis.night_verdict import NightVerdict
from harness.analysis.trends import Trend
from harness.model.inductor_policies import POLICIES
from harness.model.run_info import RunInfo
from harness.model.timings import STABLE_IQR
from harness.render import compiled, html_matrix, html_night, html_overview, run_lines, svg, tables
from harness.render.compare import EXIT_MEANING
from harness.render.escaping import CONTROL

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}
td.fits{background:#e6f4ea}td.spills{background:#fdebd3}td.at-risk{background:#fff4d6}td.exceeds{background:#fde2e1}td.failed{background:#f5c6cb}
td.incomplete{background:#e8e8e8;font-style:italic}
h2{margin-top:1.5em}.note{color:#666}
"""


def _inert(value: Any) -> Any:
    """Every value the template prints, control characters dropped (markup from svg.py is kept as it is)."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return "" if value is None else value
    return CONTROL.sub("", value)


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("harness.render", "templates"),
        autoescape=True,
        finalize=_inert,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["join_lines"] = lambda lines: Markup("<br>").join(_inert(x) for x in lines)
    return env.get_template("report.html.j2")


def warm() -> None:
    """Compile the page's template now (a process that forks runs, :mod:`harness.support.zygote`, does it once)."""
    _template()


def _runs(runs: list[RunInfo]) -> list[tuple[Any, ...]]:
    return [
        (
            info.matrix.name if info.matrix else None,
            info.host,
            ", ".join(info.gpus or ()) or "none",
            info.triton,
            info.torch,
            info.commit or "-",
            info.start,
            "INCOMPLETE (interrupted)" if info.interrupted else info.end or "INCOMPLETE",
        )
        for info in runs
    ]


def _rooflines(found: Findings) -> list[Markup]:
    """Per device that ran tuned cases: its roofline, each case's winner (green) and baselines (blue)."""
    return [
        Markup(svg.roofline(f"{d.device}", d.bandwidth_tbps, list(d.compute),
                            [(p.label, p.intensity, p.tflops, p.winner) for p in d.points], width=900, height=420))
        for d in found.rooflines
    ]  # fmt: skip


def _device_charts(found: Findings) -> list[Markup]:
    """Per case, one bar per (device, Triton version, host) winner, then its baselines; a second chart of
    the tuning-portability penalty (another target's winner on this device) where one was measured."""
    out = []
    for (kernel, dtype, shape_id), items in figures.by_case(list(found.measured)).items():
        bars, notes, colours = [], [], []
        for m in items:
            bars.append((f"{m.target} · triton {m.triton} · {m.host}: {m.config_id}", m.rate))
            notes.append(f"{m.roof.bound}-bound, {m.roof.share_text}, {m.method}")
            colours.append(svg.PALETTE[0])
            for name, rate, speedup in m.baselines:
                bars.append((f"  {name} ({m.target}, {m.triton})", rate))
                notes.append(f"speedup of the winner {speedup:.2f}×" if isinstance(speedup, (int, float)) else "")
                colours.append(svg.PALETTE[1])
        chart = svg.bar_chart(f"{kernel} {dtype} {shape_id}", bars, items[0].unit, width=1000, notes=notes,
                              colours=colours, text_w=300, label_w=460)  # fmt: skip
        out.append(Markup(chart))
        pen = [
            (f"{other} winner on {m.target} ({m.triton})", slowdown, source)
            for m in items
            for other, slowdown, source in m.penalties
        ]
        if pen:
            out.append(Markup(svg.bar_chart(
                f"{kernel} {dtype} {shape_id}: portability penalty (× the local winner's time)",
                [(label, v) for label, v, _ in pen], "×", width=1000, notes=[src[:60] for _, _, src in pen],
                colours=[svg.PALETTE[2]] * len(pen), text_w=440, label_w=300,
            )))  # fmt: skip
    return out


@dataclass(frozen=True)
class VendorRow:
    head: tuple[str, ...]  # kernel, dtype, shape, triton
    cells: tuple[Sequence[str], ...]  # each cell's lines


@dataclass(frozen=True)
class StaticVendor:
    note: str
    rows: tuple[VendorRow, ...]


def _vendor_eval(found: Findings) -> tuple[StaticVendor | None, list[VendorRow]]:
    """(a static run's comparison, what a static run can compare; the device evaluation's rows)."""
    evals = found.evaluations
    if not evals:
        return None, []
    head = lambda ev: (ev.kernel, ev.dtype, ev.shape_id, ev.triton)  # noqa: E731
    if not any(ev.devices for ev in evals):  # a static run: what it can compare, not empty device columns
        from harness.render.vendor_eval import STATIC_NOTE

        rows = tuple(VendorRow(head(ev), tuple(ev.static_cells().values())) for ev in evals)
        return StaticVendor(STATIC_NOTE, rows), []
    return None, [VendorRow(head(ev), tuple(ev.cells().values())) for ev in evals]


@dataclass(frozen=True)
class ChangeRow:
    mark: str  # "worse" | "better" | ""
    css: str
    kind: str
    what: str
    label: str
    base: Any
    new: Any
    detail: str


@dataclass(frozen=True)
class VersionPair:
    older: str
    newer: str
    reason: str
    summary: str
    compile_time: str
    changes: tuple[ChangeRow, ...]


def _version_compare(found: Findings) -> list[VersionPair]:
    out = []
    for older, newer, cmp in found.between_versions:
        if cmp.reason:
            out.append(VersionPair(older, newer, cmp.reason, "", "", ()))
            continue
        worse = [c for c in cmp.changes if c.worse]
        better = [c for c in cmp.changes if c.better]
        summary = (
            f"{cmp.matched} builds matched; {len(worse)} worse, {len(better)} better, "
            f"{len(cmp.changes) - len(worse) - len(better)} other changes; exit {cmp.exit_code}: "
            f"{EXIT_MEANING[cmp.exit_code]}"
        )
        shown = sorted(cmp.changes, key=lambda c: (not c.worse, not c.better, c.kind, c.label))[:150]
        rows = tuple(
            ChangeRow(
                "worse" if c.worse else ("better" if c.better else ""),
                "exceeds" if c.worse else ("fits" if c.better else ""),
                c.kind,
                c.what,
                c.label,
                c.base,
                c.new,
                c.detail,
            )  # fmt: skip
            for c in shown
        )
        line = cmp.compile_time.line() if cmp.compile_time is not None else ""
        out.append(VersionPair(older, newer, "", summary, line, rows))
    return out


@dataclass(frozen=True)
class TrendRow:
    series: str
    metric: str
    nights: int
    sparkline: Markup
    step: str


@dataclass(frozen=True)
class Trends:
    total: int
    rows: tuple[TrendRow, ...]


def _trends(found: Sequence[Trend] | None) -> Trends | None:
    if not found:
        return None
    ranked = sorted(found, key=lambda t: (t.step is None, t.series, t.metric))[:40]
    rows = []
    for t in ranked:
        marked = len(t.values) - 2 if t.step is not None else None
        step = "" if t.step is None else ("from zero" if t.step == float("inf") else f"{100 * t.step:+.1f}%")
        rows.append(
            TrendRow(t.series, t.metric, len(t.values), Markup(svg.sparkline(list(t.values), marked_from=marked)), step)
        )
    return Trends(len(found), tuple(rows))


def _data_links(runs: list[RunInfo]) -> list[tuple[str, str]]:
    """(the run directory, its URL relative to the page: every odd character percent-encoded)."""
    wheres = (d for info in runs for d in ((info.night.dirs or ()) if info.night else (info.dir,)) if d)
    return [(str(where), quote(str(where))) for where in wheres]


def html_report(found: Findings, night: NightVerdict | None = None) -> str:
    """The page; with ``night`` (the report was given a baseline), the night's verdict first. ``found.runs[i].dir``, when set, is that run's directory relative to the page (links); the
    trend section shows ``found.trends`` (the history file's series) when a history file was given."""
    runs, records = list(found.runs), list(found.records)
    vendor_static, vendor_devices = _vendor_eval(found)
    return _template().render(
        style=Markup(STYLE + html_overview.STYLE + html_night.STYLE),  # our own constants, no value in them
        night=html_night.view(night),
        glance=html_overview.section(found.overview),
        runs=_runs(runs),
        night_lines=[line for info in runs for line in run_lines.night_lines(info)],
        portability=html_matrix.tables(list(found.rows)),
        compiled=[(a, compiled.answer(a)) for a in found.compiled],
        compiled_policies=[(name, POLICIES.get(name, "?")) for name in found.policies],
        device_charts=_device_charts(found),
        unstable=list(found.unstable),
        unquotable=list(found.unquotable),
        stable_iqr_pct=f"{100 * STABLE_IQR:.0f}",
        rooflines=_rooflines(found),
        vendor_static=vendor_static,
        vendor_devices=vendor_devices,
        versions=_version_compare(found),
        trends=_trends(found.trends),
        failures=tables.failures(records)[:200],
        commands=run_lines.repro_commands(records, run_lines.run_dir(runs)),
        repro_said=run_lines.REPRO_SAID,
        legend=html_overview.legend(found.overview),
        data_links=_data_links(runs),
    )
