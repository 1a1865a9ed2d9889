"""What a timing says: the spread beyond which it cannot support a gate, the figure a report quotes from a runtime
entry, and the paired ratios of two timings' interleaved rounds. The timing itself is one object from the timer to
the verdict, :class:`~harness.model.runtime.Timing`.

The device stage produces these; analysis and the reports read them (neither imports the device stage).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.model.runtime import Baseline, Runtime, Timing

#: a timing whose middle half spans more than this share of its median cannot support a 5% gate
STABLE_IQR = 0.05


def headline(entry: Runtime | Baseline) -> tuple[Timing, str]:
    """The timing a figure quotes from a runtime or baseline entry: ``sustained`` where it was measured, else
    ``isolated``."""
    if entry.sustained is not None and entry.sustained.median_us:
        return entry.sustained, "sustained"
    return entry.timing or Timing(), "isolated"


def round_ratios(num: Sequence[float], den: Sequence[float]) -> list[float]:
    """Per interleaved round, ``num`` / ``den`` from two timings' ``round_medians_us`` (the winner over a
    baseline: their paired estimates)."""
    return [a / b for a, b in zip(num, den) if b > 0]


def _positive_median(rt: Runtime, method: str) -> float | None:
    t = rt.sustained if method == "sustained" else rt.timing
    value = t.median_us if isinstance(t, Timing) else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def slowdown(theirs: Runtime, own: Runtime) -> tuple[float, str] | None:
    """The tuning-portability price, the one rule the GPU phase and the reports share: how much slower another
    target's winner (``theirs``) ran here than this device's own winner (``own``), by the sustained timings where
    both have one, else the isolated ones; the method says which, and that a screened config's is a short timing.
    None where either has no timing to compare."""
    for method, label in (("sustained", "sustained"), ("timing", "isolated")):
        a, b = _positive_median(theirs, method), _positive_median(own, method)
        if a and b:
            return a / b, label + (" (screen: a short timing)" if theirs.screened or own.screened else "")
    return None
