"""Whether timings can be trusted: the method each figure was timed with, and the sample sets too spread out.

A timing whose middle half spans more than ``harness.model.timings.STABLE_IQR`` of its median cannot support
a gate of a few percent; the reports list each one (terminal summary, report.md, report.html).
"""

from __future__ import annotations

from harness.model.records import Record
from harness.model.runtime import Baseline, Runtime, Timing


def stability_text(timing: Timing, method: str) -> str:
    """``sustained`` / ``isolated``, and a warning when the timing's middle half spans more than the bound."""
    iqr = timing.iqr_over_median
    if timing.stable is False and isinstance(iqr, (int, float)):
        return f"{method}; UNSTABLE: IQR {100 * iqr:.0f}% of the median"
    return method


def unstable_timings(records: list[Record]) -> list[str]:
    """Every fully timed figure (configs, winners, baselines; either method) whose samples are not stable."""
    out = []
    for r in records:
        rt = r.runtime or Runtime()
        # a winner's timings are its config's (on the compile record): a tune record adds only its baselines
        entries: list[tuple[str, Runtime | Baseline]] = (
            [(f"{r.config_id}", rt)]
            if r.mode == "compile"
            else [(f"baseline {n}", b) for n, b in (rt.baselines or {}).items() if isinstance(b, Baseline)]
        )
        for what, entry in entries:
            if isinstance(entry, Runtime) and entry.screened:
                continue
            for key, t in (("timing", entry.timing), ("sustained", entry.sustained)):
                if isinstance(t, Timing) and t.stable is False:
                    out.append(
                        f"{r.kernel} {r.dtype} {r.shape_id} {r.target} {what} [{t.method if t.has('method') else key}]: "
                        f"IQR {100 * float(t.iqr_over_median or 0):.0f}% of the median"
                    )
    return out
