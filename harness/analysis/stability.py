"""Whether timings can be trusted: the method each figure was timed with, and the sample sets too spread out.

A timing whose middle half spans more than ``harness.model.timings.STABLE_IQR`` of its median cannot support
a gate of a few percent; the reports list each one (terminal summary, report.md, report.html).
"""

from __future__ import annotations

from typing import Any

from harness.model.records import Record


def stability_text(timing: dict[str, Any], method: str) -> str:
    """``sustained`` / ``isolated``, and a warning when the timing's middle half spans more than the bound."""
    iqr = timing.get("iqr_over_median")
    if timing.get("stable") is False and isinstance(iqr, (int, float)):
        return f"{method}; UNSTABLE: IQR {100 * iqr:.0f}% of the median"
    return method


def unstable_timings(records: list[Record]) -> list[str]:
    """Every fully timed figure (configs, winners, baselines; either method) whose samples are not stable."""
    out = []
    for r in records:
        rt = r.runtime if isinstance(r.runtime, dict) else {}
        # a winner's timings are its config's (on the compile record): a tune record adds only its baselines
        entries = (
            [(f"{r.config_id}", rt)]
            if r.mode == "compile"
            else [(f"baseline {n}", b) for n, b in (rt.get("baselines") or {}).items() if isinstance(b, dict)]
        )
        for what, entry in entries:
            if entry.get("stage") == "screen":
                continue
            for key in ("timing", "sustained"):
                t = entry.get(key)
                if isinstance(t, dict) and t.get("stable") is False:
                    out.append(
                        f"{r.kernel} {r.dtype} {r.shape_id} {r.target} {what} [{t.get('method', key)}]: IQR "
                        f"{100 * float(t.get('iqr_over_median') or 0):.0f}% of the median"
                    )
    return out
