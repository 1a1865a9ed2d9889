"""Nights of results read as trends: a series per figure, host and device, a *step* where the last ``hold`` nights
all sit beyond ``threshold`` of the median of the nights before them (in the same direction: a lasting shift; one
night off and back is a blip), and the night-to-night noise ``harness compare --history`` judges a change against.
The nights come from :mod:`harness.results.history`; nothing here opens the database.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.compare.stats import history_sigma
from harness.results import history


@dataclass(frozen=True)
class Trend:
    series: str
    metric: str
    host: str
    device: str
    nights: tuple[str, ...]
    values: tuple[float, ...]
    step: float | None  # relative shift of the last `hold` nights against the nights before, when a step


def step_of(values: list[float], threshold: float = 0.05, hold: int = 2) -> float | None:
    """The relative shift when the last ``hold`` values all sit beyond ``threshold`` of the earlier median, on the
    same side; None otherwise (too few nights, a blip, or noise)."""
    if len(values) < hold + 2:
        return None
    before = statistics.median(values[:-hold])
    if before == 0:  # a figure that was zero (spill bytes): any lasting non-zero value is a step
        return math.inf if all(v > 0 for v in values[-hold:]) else None
    shifts = [v / before - 1 for v in values[-hold:]]
    if all(s > threshold for s in shifts) or all(s < -threshold for s in shifts):
        return statistics.median(shifts)
    return None


def trends(db: Path, contains: str = "", threshold: float = 0.05, hold: int = 2) -> list[Trend]:
    """One series per figure, host and device model: nights of two machines are never one trend."""
    grouped = history.series(db, contains)
    out = []
    for (series, metric, host, device), points in grouped.items():
        values = [v for _, v in points]
        out.append(
            Trend(
                series,
                metric,
                host,
                device,
                tuple(n for n, _ in points),
                tuple(values),
                step_of(values, threshold, hold),
            )
        )
    return out


def noise_reader(db: Path) -> Callable[[str, str, bool], float | None]:
    """For ``harness compare --history``: a figure's night-to-night noise (σ of the log ratio of two nights) from
    its stored nights, None with fewer than five. The raw series of the same timing method is read also for a
    figure judged relative to its baseline: normalising removes shifts common to a run, so the raw noise is the
    larger, and the gate errs towards not calling."""
    nights = history.timing_nights(db)

    def sigma(series: str, method: str, normalised: bool) -> float | None:
        """The largest night-to-night σ among the hosts and devices with enough nights (each host's own)."""
        groups = nights.get((series, "sustained median_us" if method == "sustained" else "median_us"), {})
        found = [x for x in (history_sigma(v) for v in groups.values()) if x is not None]
        return max(found) if found else None

    return sigma
