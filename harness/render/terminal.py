"""What `harness run` prints at the end: readable at a glance, within 100 columns.

One line per kernel with its verdict counts per target (under Triton's defaults; at risk includes
the swept compile environments), one line per kernel that ran on a GPU (winner against the primary
baseline), then the worst findings (those report.html and report.md open with, in their order, wrapped), then where
the full report is. The wide tables of report.md
are printed only on request (``harness run --wide``).
"""

from __future__ import annotations

import math
from collections import defaultdict

from harness.analysis import graph_share, verdicts
from harness.analysis.findings import Findings
from harness.analysis.gate import KINDS, FindingCounts, said
from harness.analysis.trends import Trend
from harness.model.records import Record
from harness.render import compiled, device_tables, glance, tables
from harness.render.escaping import CONTROL, no_controls, plain

WIDTH = 100
ORDER = verdicts.VERDICTS


def _fit(line: str, width: int = WIDTH) -> str:
    """One terminal line, cut to ``width``; no control character of any string in it reaches the terminal."""
    line = no_controls(line)
    return line if len(line) <= width else line[: width - 1] + "…"


NAME_COLUMN = 24


def kernel_lines(found: Findings, width: int = WIDTH) -> list[str]:
    """``matmul    h100 12 fit · mi300x 6 fit, 2 at risk, 4 exceed`` — one per kernel, targets in matrix order, cut
    to ``width`` (a caller that wraps instead passes its own)."""
    counts: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    rows = found.rows
    multi = len({row.triton for row in rows}) > 1  # merged versions: one line per kernel and version
    for row in rows:
        name = f"{row.kernel} (triton {row.triton})" if multi else row.kernel
        for target, tv in row.judged.targets.items():
            counts[name][target]["same binary" if tv.duplicate_of else tv.verdict] += 1
    # names of Inductor's kernels run to 80 characters: a name longer than NAME_COLUMN stands on its own line, its
    # counts under it, so that the other kernels' counts are not pushed off the terminal
    pad = max((len(k) for k in counts if len(k) <= NAME_COLUMN), default=0)
    order = list(dict.fromkeys(t for row in rows for t in row.judged.targets))  # every kernel's in one order
    out = []
    for kernel in sorted(counts):
        parts = []
        for target in (t for t in order if t in counts[kernel]):
            c = counts[kernel][target]
            words = [glance.counted(v, c[v]) for v in ORDER if c[v]]
            words += [f"({c['same binary']} same binary as another)"] if c["same binary"] else []
            parts.append(f"{plain(target)} " + ", ".join(words))
        if len(kernel) > pad:
            out.append(_fit(plain(kernel), width))
            out.append(_fit(" " * 4 + " · ".join(parts), width))
        else:
            out.append(_fit(f"{plain(kernel):<{pad}}  " + " · ".join(parts), width))
    return out


def _first_speedup(t: Record) -> tuple[float, str] | None:
    first = next(iter((t.runtime.baselines if t.runtime and t.runtime.baselines else {}).items()), None)
    return (first[1].speedup, first[0]) if first and first[1].speedup else None


def _span(speedups: list[tuple[float, str]]) -> str:
    lo, hi = min(speedups)[0], max(speedups)[0]
    return f"{lo:.2f}–{hi:.2f}× {speedups[0][1]}" if lo != hi else f"{lo:.2f}× {speedups[0][1]}"


def device_lines(found: Findings) -> list[str]:
    """One line per kernel tuned on a GPU: cases, and the range of speedups over the primary baseline. A compiled
    function's kernels are timed through the whole function (one held at a time), so its speed-up over eager is the
    function's: said once per entry, shape and dtype, never under each kernel's name."""
    by_kernel: dict[str, list[Record]] = defaultdict(list)
    by_entry: dict[tuple[str, str, str, str], list[Record]] = defaultdict(list)
    # a tune record is its case's: the case's builds say which compiled entry the kernel is of
    entry_of = {(r.kernel, r.target, r.shape_id, r.dtype): r.inductor.entry
                for r in found.records if r.mode == "compile" and r.inductor.entry is not None}  # fmt: skip
    for r in found.records:
        entry = r.inductor.entry or entry_of.get((r.kernel, r.target, r.shape_id, r.dtype))
        if r.mode == "tune" and entry is not None:
            by_entry[(entry, r.target, r.shape_id, r.dtype)].append(r)
        elif r.mode == "tune":
            by_kernel[r.kernel].append(r)
    out = []
    for (entry, target, shape, dtype), tunes in sorted(by_entry.items()):
        ok = [t for t in tunes if t.status == "ok" and t.runtime]
        speedups = [s for s in (_first_speedup(t) for t in ok) if s]
        text = f"{plain(entry)} {shape} {dtype} on {target}: compiled {_span(speedups) if speedups else 'not timed'}"
        if len(ok) < len(tunes):
            text += f" ({len(ok)} of {len(tunes)} kernels tuned)"
        out.append(_fit(text))
        split = graph_share.of(ok)
        if split is not None:  # each kernel's share of the call's GPU time, wrapped, never cut
            parts = [f"{plain(name)} {share:.0%}" for name, share in split.kernels]
            parts.append(f"the rest (extern kernels, copies, gaps, the timing events) {split.rest:.0%}")
            said_line = f"GPU time of one call {split.total_us:,.1f} µs: " + ", ".join(parts)
            out += ["  " + w for w in glance.wrapped(said_line, WIDTH - 6)]
    for kernel, tunes in sorted(by_kernel.items()):
        ok = [t for t in tunes if t.status == "ok" and t.runtime]
        speedups = [s for s in (_first_speedup(t) for t in ok) if s]
        text = f"{plain(kernel)}: {len(ok)} of {len(tunes)} case(s) tuned on {tunes[0].target}"
        if speedups:
            text += f", {_span(speedups)}"
        roofs = [roof for roof in (found.roof(t) for t in ok) if roof is not None and roof.pct is not None]
        for bound in ("memory", "compute"):
            shares = [x.pct for x in roofs if x.bound == bound and x.pct is not None]
            if shares:
                what = "HBM" if bound == "memory" else "/".join(sorted({x.math for x in roofs if x.bound == bound}))
                low, high = f"{min(shares):.0f}", f"{max(shares):.0f}"
                text += f"; {what} {low if low == high else low + '–' + high}%"
        out.append(_fit(text))
    return out


def summary(found: Findings, width: int = WIDTH) -> list[str]:
    """The lines `harness run` ends with (before the paths of results.json and report.md), at most ``width``
    columns (a terminal narrower than :data:`WIDTH` gets its own width)."""
    parts: list[str] = []
    if found.compiled:  # a compiled function's answer first: what each vendor gets, then the per-kernel counts
        parts += ["compiled functions: what each target gets (graphs in report.md):"]
        # wrapped, never cut: a named difference lists every target's values
        for line in compiled.terminal(list(found.compiled)):
            indent = "  " + " " * (len(line) - len(line.lstrip()))
            parts += [indent + w for w in glance.wrapped(plain(line.lstrip()), width - len(indent))]
    parts += glance.wrapped("portability (configs per target, Triton's defaults; at risk: a swept environment):", width)
    parts += [part for line in kernel_lines(found, width=1 << 16) for part in glance.wrap_parts("  " + line, width)]
    for reason, builds in found.not_on_this_gpu:
        parts += glance.wrapped(f"not run on this GPU ({builds} builds): {plain(reason)}", width)
    device = device_lines(found)
    if device:
        parts += ["on the device (winner vs the first baseline; share of its roof's peak, HBM or the dtype's FLOP/s):"]
        parts += ["  " + line for line in device]
    adapted = [la.short() for la in found.launches if la.adapts or not la.own_faces]
    if adapted:
        parts += ["captured ops (each target's launches in report.md):"] + ["  " + a for a in adapted]
    bad = glance.worst_terminal(found, width)
    if bad:
        parts += ["worst findings (as report.html and report.md list them):", *bad]
    return [_fit(p, width) for p in parts]


def incomplete_lines(found: Findings) -> list[str]:
    """INCOMPLETE, first: runs that were interrupted (or never finished), and targets without a deciding build."""
    out = [
        f"INCOMPLETE: the run on {plain(info.host or '?')} started {info.start} was "
        + ("interrupted" if info.interrupted else "never finished")
        + " before every case ran; `harness run --resume DIR` runs only the missing cases"
        for info in found.runs
        if info.unfinished
    ]
    missing = found.incomplete
    if missing:
        out.append(
            f"INCOMPLETE: {missing} config x target verdict(s) have no build under the deciding environment "
            "(Triton's defaults): shown as incomplete, never decided by an opt-in environment"
        )
    return out


def final_lines(found: Findings, wide: bool = False, width: int = WIDTH) -> list[tuple[bool, str]]:
    """Everything `harness run` prints about its records, as (is_section_title, text): INCOMPLETE where the run
    or a verdict is, the summary, or with ``wide`` report.md's full tables; then launch parity, shared-GPU
    warnings and known failures."""
    out: list[tuple[bool, str]] = []
    records = list(found.records)
    head = [(False, "harness: " + line) for line in incomplete_lines(found)]
    tuned = any(r.mode == "tune" for r in records)
    if wide:  # the full tables of report.md, as wide as they are
        out.append((True, "triton portability: comparison"))
        for table in (
            tables.comparison_table(found, fmt="simple"),
            tables.summary_table(found, fmt="simple"),
            tables.target_summary(found, fmt="simple"),
        ):
            out += [(False, table), (False, "")]
        at_risk = tables.risk_lines(found)
        if at_risk:
            out.append((False, f"harness: {len(at_risk)} config(s) at risk (reasons in report.md), e.g.: {at_risk[0]}"))
        if tuned:
            out += [
                (True, "triton portability: on the device"),
                (False, device_tables.device_table(found, fmt="simple")),
            ]
        out += [(False, "limit: " + line) for line in tables.limit_findings(records)]
    else:
        out.append((True, "triton portability"))
        out += head + [(False, line) for line in summary(found, width)]
        head = []
    out += head
    if tuned:
        out += [(False, "harness: " + line) for line in device_tables.launch_parity_lines(records)]
    out += [(False, "harness: WARNING timings shared a GPU: " + line) for line in device_tables.gpu_overlaps(records)]
    unstable = found.unstable
    out += [(False, f"harness: WARNING unstable timing ({len(unstable)} in all): {line}") for line in unstable[:5]]
    for why, n in found.unchecked:  # each reason whole, wrapped to the terminal
        out += [(False, part) for part in glance.wrapped(plain(f"harness: {n} config(s) not checked: {why}"), width)]
    flagged = found.unquotable
    out += [(False, f"harness: WARNING not to be quoted ({len(flagged)} in all): {line}") for line in flagged[:5]]
    expected = sum(1 for r in records if r.expected_failure)
    if expected:
        out.append((False, f"harness: {expected} expected failure(s) (known_failures of the matrix), not counted"))
    out += [(False, "harness: known failure now passes: " + line) for line in tables.fixed_known_failures(records)]
    # nothing a kernel name, an error or a matrix string holds drives the terminal (lines and tables kept)
    return [(section, CONTROL.sub("", line)) for section, line in out]


def findings_line(counts: FindingCounts, fail_on: tuple[str, ...], tripped: tuple[str, ...], code: int) -> str:
    """The run's last line: its configs by finding kind (the kinds it has), what ``--fail-on`` named and whether
    it tripped, and the exit code."""
    found = said(counts)
    gate = ""
    if fail_on:
        named = "any" if set(fail_on) == set(KINDS) else ",".join(fail_on)
        gate = f" · --fail-on {named}: " + (f"{', '.join(tripped)} found" if tripped else "none found")
    return f"harness: {counts.configs} configs: {found}{gate} · exit {code}"


def trend_line(t: Trend) -> str:
    """One series as ``harness history show`` prints it: the nights' values, the step if there is one."""
    vals = " ".join(f"{v:.1f}" for v in t.values)
    mark = (
        ""
        if t.step is None
        else (
            "  STEP from zero over the last nights"
            if math.isinf(t.step)
            else f"  STEP {100 * t.step:+.1f}% over the last nights"
        )
    )
    where = " on ".join(x for x in (t.host, t.device) if x)
    return f"{t.series} [{t.metric}]{' (' + where + ')' if where else ''}: {vals}{mark}"


def notes(said: list[str], skipped: list[str], width: int = WIDTH) -> list[str]:
    """The session's own notes (``harness: ...``), then its skipped cases grouped by reason (in place of pytest's
    skip summary, whose lines name a source line and run past the terminal), each wrapped to ``width``."""
    counts: dict[str, int] = {}
    for reason in skipped:
        counts[reason] = counts.get(reason, 0) + 1
    lines = said + [f"harness: {n} case(s) skipped: {reason}" for reason, n in counts.items()]
    out = []
    for line in lines:
        lead = line[: len(line) - len(line.lstrip())]  # a line indented under the one before keeps its indent
        out += [lead + part for part in glance.wrapped(plain(line), width - len(lead))]
    return out
