"""Comparison tables: one row per (kernel, dtype, shape, config), a column group per target.

Rendering only: takes the findings (:mod:`harness.analysis.findings`), returns text. Verdicts come from
:mod:`harness.analysis.verdicts` (the same ones ``results.json`` stores); the verdict column is the point of the
product: it marks configs that fit one vendor's GPUs and not the other's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Callable

from harness.analysis import verdicts
from harness.analysis.findings import Findings
from harness.analysis.rows import Row
from harness.model.records import Record
from harness.render.escaping import CONTROL, plain
from harness.render.text_table import natural, table


def cell_texts(rec: Record | None, tv: verdicts.TargetVerdict | None) -> list[str]:
    """One target column's cells (fits, smem B, regs, spill B, occ); the verdict of a ``target@env`` column is that
    build's own outcome. report.md's table and report.html's cells both say these."""
    if rec is None:
        return ["", "", "", "", ""]
    if rec.status != "ok":
        return [rec.status, "", "", "", ""]
    res = rec.resources
    limit = next((f.limit for f in rec.flags if f.resource == "shared"), None)
    static = res.static_shared or 0
    smem = f"{res.shared or 0}" + (f"+{static}" if static else "") + (f" > {limit:g}" if limit is not None else "")
    frac = res.occupancy_frac
    kind = tv.verdict if tv is not None and tv.decided_by is rec else verdicts.outcome(rec)
    label = {"fits": "yes", "spills": "yes, SPILLS", "at risk": "yes, AT RISK", "exceeds": "NO"}.get(kind, kind)
    if rec.duplicate_of:
        label += f" (same binary as {rec.duplicate_of})"
    occ = "" if res.occupancy is None else f"{res.occupancy:g}" + ("" if frac is None else f" ({frac:.0%})")
    spill = "n/a" if res.spill_bytes is None else str(res.spill_bytes)  # None: no ptxas report of this binary
    return [label, smem, "" if res.registers is None else str(res.registers), spill, occ]


def comparison_table(found: Findings, fmt: str = "github") -> str:
    rows = found.rows
    targets = sorted({t for row in rows for t in row.cells}, key=lambda t: (_vendor_of(rows, t), t))
    multi_triton = len({row.triton for row in rows}) > 1
    headers = ["kernel", "dtype", "shape", "config", "space"] + (["triton"] if multi_triton else []) + ["cpu interp"]
    for t in targets:
        headers += [f"{t} fits", f"{t} smem B", f"{t} regs", f"{t} spill B", f"{t} occ"]
    headers.append("verdict")
    body = []
    # numbers inside ids by value (s3_w4 < s3_w16), in report.html's order
    order = sorted(
        rows, key=lambda r: (r.kernel, r.dtype, natural(r.shape_id), natural(r.triton), natural(r.config_id))
    )
    for row in order:
        line = [row.kernel, row.dtype, row.shape_id, row.config_id, row.origin]
        line += ([row.triton] if multi_triton else []) + [row.check]
        for t in targets:
            rec = row.cells.get(t)
            line += cell_texts(rec, row.judged.targets.get(rec.target) if rec is not None else None)
        line.append(("⚠ " if row.asymmetric else "") + row.verdict)
        body.append(line)
    return table(body, headers, fmt)


def _vendor_of(rows: Sequence[Row], target: str) -> str:
    for row in rows:
        if target in row.cells:
            return row.cells[target].vendor
    return ""


SUMMARY_COLUMNS = (
    "fits both",
    "NVIDIA only",
    "AMD only",
    "mixed",
    "fits neither",
    "fits",
    "fits some",
    "exceeds a limit",
    "failed",
    verdicts.INCOMPLETE,
)


def summary_table(found: Findings, fmt: str = "github") -> str:
    """Per kernel (and Triton version, when several): how many configs fall in each portability category."""
    rows = found.rows
    multi = len({row.triton for row in rows}) > 1
    counts: dict[tuple[str, ...], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        if not row.judged.duplicate:  # a config whose every build is another's binary is counted once
            counts[(row.kernel, row.triton) if multi else (row.kernel,)][row.judged.category] += 1
    used = [c for c in SUMMARY_COLUMNS if any(c in v for v in counts.values())]
    body = [list(k) + [counts[k].get(c, 0) for c in used] for k in sorted(counts)]
    return table(body, ["kernel"] + (["triton"] if multi else []) + used, fmt)


def target_summary(found: Findings, fmt: str = "github") -> str:
    """Per kernel and target column: configs that fit, are at risk, exceed a limit, failed (each binary once:
    a build that is another config's binary counts under ``same binary`` only).

    The deciding column of a target (Triton's defaults) counts target verdicts; an
    opt-in environment's column counts its own builds' outcomes.
    """
    rows = found.rows
    multi = len({row.triton for row in rows}) > 1  # one count per Triton version: never summed across versions
    counts: dict[tuple[str, ...], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        version = (row.triton,) if multi else ()
        for tv in row.judged.targets.values():
            counts[(row.kernel, *version) + (tv.column,)]["same binary" if tv.duplicate_of else tv.verdict] += 1
            for o in tv.others:
                counts[(row.kernel, *version) + (o.column,)][
                    "same binary" if o.duplicate_of else verdicts.outcome(o)
                ] += 1
    cols = [
        v
        for v in (*verdicts.VERDICTS, "same binary")
        if v in ("fits", "spills", "at risk", "exceeds", "failed") or any(v in c for c in counts.values())
    ]
    body = [list(k) + [c.get(v, 0) for v in cols] for k, c in sorted(counts.items())]
    return table(body, ["kernel"] + (["triton"] if multi else []) + ["target"] + cols, fmt)


def risk_lines(found: Findings) -> list[str]:
    """One line per (config, target) that fits under Triton's defaults but not under a swept environment."""
    out, tag = [], _version_tag(found.records)
    for row in sorted(found.rows, key=lambda r: (r.kernel, r.dtype, r.shape_id, r.config_id, r.triton)):
        for tv in row.judged.targets.values():
            if tv.verdict == "at risk" and tv.decided_by is not None:
                shared = tv.decided_by.resources.shared
                out.append(
                    f"{row.kernel} {row.dtype} {row.shape_id} {row.config_id}{tag(row.triton)} on {tv.target} "
                    f"(shared {shared} B by default): " + "; ".join(tv.reasons)
                )
    return out


def failures(records: list[Record]) -> list[str]:
    """One line per record that did not compile or did not match its reference."""
    out, tag = [], _version_tag(records)
    for r in sorted(records, key=lambda r: (r.kernel, r.dtype, r.target, r.config_id, r.triton)):
        where = ("interpreter" if r.mode == "interpret" else r.column) + tag(r.triton)
        if r.status == "interpret-unsupported":
            continue  # not the kernel's failure: listed by interpreter_gaps
        if r.status != "ok":
            expected = f" [expected: {r.expected_failure}]" if r.expected_failure else ""
            if r.mode == "compile" and r.environment != r.deciding_environment:  # an opt-in knob's build
                expected += f" [opt-in environment {r.environment}: does not decide the verdict]"
            out.append(
                f"{r.kernel} {r.dtype} {r.shape_id} {where} {r.config_id}: {r.status}{expected}: {r.error[:300]}"
            )
        elif r.mode == "compile" and r.correctness is not None and r.correctness.failed:
            said = "; ".join(f"{c.status}: {c.error or ''}" for c in r.correctness.failed)
            out.append(f"{r.kernel} {r.dtype} {r.shape_id} {where} {r.config_id}: interpreter: {said[:300]}")
        elif r.mode == "compile" and r.runtime and r.runtime.status not in ("ok", "not_launched"):
            out.append(
                f"{r.kernel} {r.dtype} {r.shape_id} {where} {r.config_id}: on device: "
                f"{r.runtime.status}: {str(r.runtime.error or '')[:300]}"
            )
    return out


def interpreter_gaps(records: list[Record]) -> list[str]:
    """Interpreter checks that could not run (a limitation of Triton's interpreter, or a compiled graph that cannot
    run on the host), with the reason."""
    out = [
        f"{r.kernel} {r.dtype} {r.config_id}: {r.error[:300]}"
        for r in records
        if r.mode == "interpret" and r.status == "interpret-unsupported"
    ]
    for r in records:
        if r.mode == "compile" and r.correctness is not None and r.correctness.unchecked:
            why = "; ".join(c.reason or "" for c in r.correctness.unchecked)
            out.append(f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}: {why[:300]}")
    return out


def traceback_blocks(records: list[Record], limit: int = 20, lines: int = 40) -> list[str]:
    """Folded ``<details>`` blocks with the traceback (and compiler output) of failed builds, HTML-escaped."""
    out = []
    failed = [
        r
        for r in sorted(records, key=lambda r: (r.kernel, r.dtype, r.target, r.config_id))
        if r.status != "ok" and r.traceback
    ]
    for r in failed[:limit]:
        where = "interpreter" if r.mode == "interpret" else r.column
        title = _element_text(
            plain(
                f"{r.kernel} {r.dtype} {r.shape_id} {where} {r.config_id}: {r.error.splitlines()[0][:160]}"
                if r.error
                else f"{r.kernel} {r.config_id}"
            )
        )
        body = _element_text(CONTROL.sub("", "\n".join(r.traceback.strip().splitlines()[-lines:])))
        out.append(f"<details><summary>{title}</summary>\n\n<pre>{body}</pre>\n</details>")
    if len(failed) > limit:
        out.append(f"({len(failed) - limit} more in results.json, field `traceback`)")
    return out


def _element_text(text: str) -> str:
    """Text inside an HTML element of report.md: ``&`` and ``<`` escaped, which is all that can start markup there,
    so that quotes and ``>`` read as themselves in the raw file."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def fixed_known_failures(records: list[Record]) -> list[str]:
    return [
        f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id} compiles now (entry: {r.known_failure_fixed})"
        for r in sorted(records, key=lambda r: (r.kernel, r.dtype, r.shape_id, r.column, r.config_id))
        if r.known_failure_fixed
    ]


def _version_tag(records: Sequence[Record]) -> Callable[[str], str]:
    """`` [triton X]`` after a finding when the records hold several Triton versions, else nothing."""
    several = len({r.triton for r in records}) > 1
    return lambda version: f" [triton {version}]" if several else ""


def limit_findings(records: list[Record]) -> list[str]:
    """One line per error flag: the resource, the value, the limit."""
    out, tag = [], _version_tag(records)
    for r in sorted(records, key=lambda r: (r.kernel, r.dtype, r.shape_id, r.config_id, r.target, r.triton)):
        for f in r.flags:
            if f.severity == "error":
                out.append(
                    f"{r.kernel} {r.dtype} {r.shape_id} {r.config_id}{tag(r.triton)}: {r.column} ({r.arch}) "
                    f"{f.resource} {f.value:g} exceeds limit {f.limit:g}"
                )
    return out
