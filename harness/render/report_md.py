"""report.md: the answer first (configs per kernel and target, the worst findings: :mod:`harness.render.glance`),
then the per-kernel and per-target summaries, then the wide comparison table and the sections a reader opens on
purpose (at risk, the device, interpreter gaps, limits, failures with their tracebacks, repro commands).
Rendering only: every decision is the findings' (:mod:`harness.analysis.findings`)."""

from __future__ import annotations

import json

from harness.analysis.findings import Findings
from harness.model.timings import STABLE_IQR
from harness.render import compiled, glance, run_lines
from harness.render.device_tables import device_table, launch_parity_lines
from harness.render.escaping import md
from harness.render.tables import (
    comparison_table,
    failures,
    fixed_known_failures,
    interpreter_gaps,
    limit_findings,
    risk_lines,
    summary_table,
    target_summary,
    traceback_blocks,
)


def markdown_report(found: Findings) -> str:
    """The whole of report.md for these findings."""
    runs, records = found.runs, list(found.records)
    parts = ["# Triton portability report", ""]
    for info in runs:
        parts.append(
            md(
                f"matrix {info.matrix.name if info.matrix else None} on {info.host}: triton "
                f"{info.triton}, torch {info.torch}, python {info.python}, "
                f"GPUs: {', '.join(info.gpus or ()) or 'none'}, commit {info.commit or '-'}, "
                f"{info.start} → {info.end or 'unfinished'}"
            ).join(("- ", ""))
        )
        if info.unfinished:
            parts.append(
                "- **INCOMPLETE**: this run was interrupted before every case finished; "
                "`harness run --resume DIR` runs only the missing cases"
            )
        parts += [f"- resumed {md(t)}" for t in info.resumed or ()]
        parts += [f"- {md(line)}" for line in run_lines.night_lines(info)]
    missing = found.incomplete
    if missing:
        parts.append(
            f"- **INCOMPLETE**: {missing} config × target verdict(s) have no build under the deciding "
            "environment (Triton's defaults): marked `incomplete`, never decided by an opt-in environment"
        )
    parts += [""]
    # compiled entries: each target's kernel graph and what differs is the answer; then the glance, the wide tables
    parts += compiled.report_section(found.policies, list(found.compiled))
    parts += [*glance.markdown(found)]  # the answer first; the wide tables after it
    parts += [
        "## Summary per kernel",
        "",
        summary_table(found),
        "",
        "## Per target and compile environment",
        "",
        target_summary(found),
        "",
        "## Comparison",
        "",
        comparison_table(found),
        "",
    ]
    if found.launches:  # captured ops: what each target's virtual device got from the library
        parts += ["## Captured launches per target", ""] + [f"- {md(la.line())}" for la in found.launches] + [""]
    at_risk = risk_lines(found)
    if at_risk:
        parts += (
            [
                "## At risk",
                "",
                "Configs that fit under Triton's defaults, but not under another swept compile environment:",
                "",
            ]
            + [f"- {md(line)}" for line in at_risk]
            + [""]
        )
    if any(r.mode == "tune" for r in records):
        devices = {
            json.dumps(r.runtime.device.to_json(), sort_keys=True)
            for r in records
            if r.mode == "tune" and r.runtime and r.runtime.device
        }
        parts += ["## On the device", "", device_table(found), ""]
        parts += [f"- device: {md(d)}" for d in sorted(devices)] + [""]
        parts += [f"- {md(line)}" for line in launch_parity_lines(records)] + [""]
        parts += [
            "Timed: `sustained` (back to back in one graph of many launches, over inputs larger than the "
            "last-level cache: the winner's figure, its rates and the baselines' speedups) or `isolated` (one "
            "launch per sample after an L2 flush: the tuner's ranking). See `harness/device/timing.py`.",
            "",
        ]
        unstable = found.unstable
        if unstable:
            parts += (
                [f"Unstable timings (IQR over {100 * STABLE_IQR:.0f}% of the median):", ""]
                + [f"- {md(line)}" for line in unstable]
                + [""]
            )
        if found.unquotable:
            parts += (
                ["Not to be quoted as they stand (harness/analysis/quotable.py says why):", ""]
                + [f"- {md(line)}" for line in found.unquotable]
                + [""]
            )
    gaps = interpreter_gaps(records)
    if gaps:
        parts += (
            [
                "## Not checked by the interpreter",
                "",
                "Triton's CPU interpreter could not run these configs "
                "(`interpret-unsupported`: not the kernel's failure; the GPU path checks them):",
                "",
            ]
            + [f"- {md(line)}" for line in gaps]
            + [""]
        )
    findings = limit_findings(records)
    if findings:
        parts += ["## Limits exceeded", ""] + [f"- {md(line)}" for line in findings] + [""]
    fails = failures(records)
    if fails:
        parts += ["## Failures", ""] + [f"- {md(line)}" for line in fails] + [""]
        blocks = traceback_blocks(records)
        if blocks:
            parts += ["Where each came from (traceback and compiler output, folded):", ""] + blocks + [""]
    commands = run_lines.repro_commands(records, run_lines.run_dir(runs))
    if commands:
        parts += ["## Reproduce", "", f"{run_lines.REPRO_SAID} (`harness repro`):", "", "```", *commands, "```", ""]
    fixed = fixed_known_failures(records)
    if fixed:
        parts += ["## Known failures that now pass", "", "Their `known_failures` entries can be removed:", ""]
        parts += [f"- {md(line)}" for line in fixed] + [""]
    parts += [
        "Columns: `smem B` is the dynamic shared memory / LDS the launch requests (`metadata.shared`), "
        "plus the static bytes the binary declares where it has any (`+1024`: cuobjdump's SHARED), "
        "with the limit when it is exceeded; `regs` is registers per thread (AMD: the compiler's unified "
        "VGPR + AGPR total, `.vgpr_count`); `spill B` is bytes per thread spilled to memory (NVIDIA: ptxas "
        "spill stores; AMD: 4 bytes per spilled VGPR); `occ` is resident warps per SM sub-partition "
        "(NVIDIA) or waves per SIMD (AMD: the compiler's figure capped by LDS), with the fraction of the "
        "target's maximum; `space` is the config space a config came from (`nvidia+amd`: both). "
        "A target's verdict is decided by its build under Triton's defaults; a column `target@name` is the "
        "build under the opt-in compile environment `name`, which can only add `AT RISK` (fits by default, "
        "not under that environment). docs/figures.md says how each figure is read.",
        "",
    ]
    return "\n".join(parts)
