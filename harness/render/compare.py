"""A comparison as text: a summary a person reads in ten seconds, the full table in markdown, the diff as JSON."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from tabulate import tabulate

from harness.analysis.compare import ir_diff
from harness.analysis.compare.diff import Change, Comparison
from harness.analysis.compare.headline import Headline
from harness.analysis.compare.timings import JudgedTiming
from harness.render.escaping import md, plain

EXIT_MEANING = {
    0: "nothing worse",
    1: "performance regression only",
    2: "worse: new compile, correctness or limit failures, or builds missing in new",
    3: "the runs cannot be compared",
}
KINDS = ("status", "verdict", "correctness", "timing", "winner", "resource", "code")


def _line(c: Change) -> str:
    mark = "WORSE" if c.worse else ("better" if c.better else "")
    return plain(
        f"{mark + ': ' if mark else ''}{c.kind} {c.what}: {c.label}: {c.base} -> {c.new}"
        + (f" ({c.detail})" if c.detail else "")
    )


def _listed(title: str, items: Sequence[str], limit: int) -> list[str]:
    if not items:
        return []
    return (
        [f"{title} ({len(items)}):"]
        + [f"  {plain(i)}" for i in items[:limit]]
        + ([f"  ... {len(items) - limit} more in the full table"] if len(items) > limit else [])
    )


def _z(t: JudgedTiming) -> float:
    import math

    j = t.judgement
    return abs(math.log(j.ratio)) / j.sigma if j.sigma and j.ratio > 0 else -1.0


def judged_lines(cmp: Comparison) -> list[str]:
    """One line per timing figure considered, the closest to being called first: change, noise, decision, why."""
    out = []
    for t in sorted(cmp.judged, key=_z, reverse=True):
        j = t.judgement
        change = f"{100 * (j.ratio - 1):+5.1f}%" if j.ratio == j.ratio else "   n/a"
        noise = f"σ {100 * j.sigma:3.1f}% {j.noise_source}" if j.sigma is not None else "no p-value"
        out.append(plain(f"  {j.verdict:10} {change}  {noise:28} {t.label} [{t.method}]: {j.reason}"))
    return out


def _names(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(plain(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def headline_lines(h: Headline, exit_code: int, limit: int = 3) -> list[str]:
    """What changed, first: how the runs were made differently, the kernels added, removed and rewritten, the
    findings that are new (and those gone), then the verdict; one line each, the names cut to ``limit``."""
    made = "; ".join(f"{s.what} {s.base} -> {s.new}" for s in h.settings)
    lines = [
        f"changed: {made}" if made else "changed: nothing in how the runs were made (torch, Triton, modes, targets)"
    ]
    kernels = [
        f"{len(items)} {word} ({_names(items, limit)})"
        for items, word in (
            (h.kernels_added, "added"),
            (h.kernels_removed, "removed"),
            (h.kernels_changed, "rewritten"),
        )  # fmt: skip
        if items
    ]
    lines.append("kernels: " + ("; ".join(kernels) if kernels else "none added, removed or rewritten"))
    news = [f"{len(f.configs)} {f.kind} ({_names(f.configs, limit)})" for f in h.new_findings]
    lines.append("new findings: " + ("; ".join(news) if news else "none"))
    gone = [f"{len(f.configs)} {f.kind} ({_names(f.configs, limit)})" for f in h.gone_findings]
    if gone:
        lines.append("findings gone: " + "; ".join(gone))
    lines.append(f"exit {exit_code}: {EXIT_MEANING[exit_code]}")
    return lines


def summary(cmp: Comparison, worst: int = 8) -> str:
    if cmp.reason:
        return "\n".join([f"harness compare: {cmp.reason} (exit 3)"] + _listed("not compared", cmp.not_compared, worst))
    counts = Counter(c.kind for c in cmp.changes)
    worse = Counter(c.kind for c in cmp.changes if c.worse)
    better = Counter(c.kind for c in cmp.changes if c.better)
    parts = [
        f"{cmp.matched} records matched ({len(cmp.only_base)} only in base, {len(cmp.only_new)} only in new, "
        f"{len(cmp.missing_in_new)} missing in new, {len(cmp.not_compared)} not compared); "
        f"{cmp.timings_judged} timings judged"
        + (
            f", largest change not called significant {100 * cmp.largest_insignificant:.1f}%"
            if cmp.largest_insignificant is not None
            else ""
        )
    ]
    parts.append(
        ", ".join(
            f"{k}: {counts[k]}" + "".join(f" ({n} {w})" for n, w in ((worse[k], "worse"), (better[k], "better")) if n)
            for k in KINDS
            if counts[k]
        )
        or f"no change among the {cmp.matched} matched records"
    )
    parts += [
        f"  WORSE: missing in new (selected by its matrix, not built): {plain(m)}" for m in cmp.missing_in_new[:worst]
    ]
    if len(cmp.missing_in_new) > worst:
        parts.append(f"  ... {len(cmp.missing_in_new) - worst} more missing in new in the full table")
    ranked = sorted((c for c in cmp.changes if c.worse), key=lambda c: KINDS.index(c.kind))
    parts += [f"  {_line(c)}" for c in ranked[:worst]]
    if len(ranked) > worst:
        parts.append(f"  ... {len(ranked) - worst} more worse changes in the full table")
    # what a person wants to see even when nothing got worse: the changes by kind (new spills, register moves,
    # binaries whose instruction mix moved the same way), then the largest new spills, then fixes
    if cmp.groups:
        parts.append(f"  changes by kind ({len(cmp.groups)} groups; all in the full table):")
        parts += [f"    {plain(g.line())}" for g in cmp.groups[:worst]]
    spills = sorted(
        (c for c in cmp.changes if c.what == "spill_bytes" and (c.new or 0) > (c.base or 0)),
        key=lambda c: (c.new or 0) - (c.base or 0),
        reverse=True,
    )
    if spills:
        parts.append(f"  {len(spills)} config(s) spill more, the most:")
        parts += [f"    {_line(c)}" for c in spills[:3]]
    fixed = [c for c in cmp.changes if c.better and c.kind in ("status", "verdict", "correctness")]
    parts += [f"  {_line(c)}" for c in fixed[:3]]
    if cmp.compile_time is not None:
        parts.append(("WORSE: " if cmp.compile_time.worse else "") + cmp.compile_time.line())
    parts += _listed("not compared (left out of every verdict)", cmp.not_compared, 4)
    if cmp.judged:
        parts.append(
            f"timings judged ({cmp.timings_judged}; the change, the noise it was judged against, the decision):"
        )
        parts += judged_lines(cmp)
    return "\n".join(parts)


def repro_lines(cmp: Comparison, limit: int = 100) -> list[str]:
    """Each worse static finding as the command that writes its standalone script (``NEW``: the new run's
    directory)."""
    seen = sorted({c.repro for c in cmp.changes if c.worse and c.repro})
    more = [f"... {len(seen) - limit} more"] if len(seen) > limit else []
    return [f"harness repro NEW {args}" for args in seen[:limit]] + more


def _links(c: Change, diffs: str | None, written: set[str] | None) -> str:
    """A changed binary's IR diffs, as links relative to the markdown (``harness compare --diffs``)."""
    if c.kind != "code" or diffs is None or written is None:
        return ""
    found = [k for k in ir_diff.KINDS if f"{c.label}\0{k}" in written]
    return " ".join(f"[{k}]({quote(diffs + '/' + ir_diff.diff_name(c.label, k))})" for k in found)


def markdown(
    cmp: Comparison, diffs: str | None = None, written: set[str] | None = None, head: Headline | None = None
) -> str:
    """The full comparison; ``diffs``: where ``--diffs`` wrote the IR diffs, relative to the markdown, and
    ``written``: which (label NUL kind) it wrote, each linked from its build's row; ``head``: what changed, first."""
    lines = ["# Run comparison", ""]
    if head is not None:
        lines += [f"- {md(line)}" for line in headline_lines(head, cmp.exit_code, limit=12)] + [""]
    lines += [md(summary(cmp).splitlines()[0]), ""]
    if cmp.groups:
        lines += ["## Changes by kind", ""] + [f"- {md(g.line())}" for g in cmp.groups] + [""]
    commands = repro_lines(cmp)
    if commands:
        lines += ["Each worse build as a standalone Triton script a maintainer can run (`NEW`: the new run's directory):",
                  "", "```", *commands, "```", ""]  # fmt: skip
    if cmp.changes:
        body = [
            [c.kind, c.label, c.what, c.base, c.new, "worse" if c.worse else ("better" if c.better else ""), c.detail]
            for c in sorted(cmp.changes, key=lambda c: (KINDS.index(c.kind), c.label))
        ]
        links = [_links(c, diffs, written) for c in sorted(cmp.changes, key=lambda c: (KINDS.index(c.kind), c.label))]
        lines.append(
            tabulate(
                [[md(v) for v in row] + ([link] if diffs else []) for row, link in zip(body, links)],
                headers=["kind", "record", "what", "base", "new", "", "detail"] + (["IR diff"] if diffs else []),
                tablefmt="github",
                disable_numparse=True,
            )
        )
    if cmp.judged:
        rows = [
            [
                t.judgement.verdict,
                t.label,
                t.method,
                t.reference,
                f"{t.base_us:.2f}",
                f"{t.new_us:.2f}",
                f"{100 * (t.judgement.ratio - 1):+.1f}%",
                f"{100 * t.judgement.sigma:.1f}% ({t.judgement.noise_source})" if t.judgement.sigma else "",
                f"{t.judgement.p_adjusted:.2g}" if t.judgement.p_adjusted is not None else "",
                t.judgement.reason,
            ]
            for t in sorted(cmp.judged, key=_z, reverse=True)
        ]
        lines += [
            "",
            "## Timings judged",
            "",
            tabulate(
                [[md(v) for v in row] for row in rows],
                headers=[
                    "decision",
                    "record",
                    "timing",
                    "figure",
                    "base µs",
                    "new µs",
                    "change",
                    "noise σ",
                    "q (BH)",
                    "why",
                ],
                tablefmt="github",
                disable_numparse=True,
            ),
        ]
    for title, items in (
        ("Missing in new (selected by the new run's matrix, not built: worse)", cmp.missing_in_new),
        ("Not compared", cmp.not_compared),
        ("Only in base", cmp.only_base),
        ("Only in new", cmp.only_new),
    ):
        if items:
            lines += ["", f"## {title}", ""] + [f"- {md(i)}" for i in items]
    lines += ["", f"Exit {cmp.exit_code}: {EXIT_MEANING[cmp.exit_code]}.", ""]
    return "\n".join(lines)


def _change_json(c: Change) -> dict[str, Any]:
    """A change's own fields (its grouping view and the two builds it was read from are not part of it)."""
    return {k: v for k, v in dataclasses.asdict(c).items() if k not in ("member", "builds")}


def _judged_json(t: JudgedTiming) -> dict[str, Any]:
    """A judged figure: its medians, not the whole timings it carries (the runs' records hold those)."""
    return {"label": t.label, "method": t.method, "reference": t.reference, "base_us": t.base_us, "new_us": t.new_us,
            "judgement": dataclasses.asdict(t.judgement)}  # fmt: skip


def to_json(cmp: Comparison) -> dict[str, Any]:
    compile_time = dataclasses.asdict(cmp.compile_time) if cmp.compile_time is not None else None
    return {
        "matched": cmp.matched,
        "compile_time": compile_time,
        "only_base": cmp.only_base,
        "only_new": cmp.only_new,
        "missing_in_new": cmp.missing_in_new,
        "not_compared": cmp.not_compared,
        "timings_judged": cmp.timings_judged,
        "largest_insignificant": cmp.largest_insignificant,
        "reason": cmp.reason,
        "exit_code": cmp.exit_code,
        "changes": [_change_json(c) for c in cmp.changes],
        "groups": [dataclasses.asdict(g) for g in cmp.groups],
        "timings": [_judged_json(t) for t in cmp.judged],
    }
