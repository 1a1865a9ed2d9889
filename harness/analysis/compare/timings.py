"""The timing figures two runs share, as one family for :func:`harness.analysis.compare.stats.judge_family`.

A figure is one config's median in one case: the ``sustained`` timing where both runs (and,
normalised, both runs' baselines) have one, else the ``isolated`` timing. Normalised, it is the
ratio to the case's primary baseline measured in the same run — with sustained timings, the
ratio per interleaved round, whose spread is that run's own noise of the ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from harness.analysis.compare import stats
from harness.model.records import Record
from harness.model.runtime import Baseline, Runtime, Timing

#: ``(series, method, normalised) -> sigma or None``: a figure's night-to-night noise (the history file)
HistoryNoise = Callable[[str, str, bool], "float | None"]


def label(r: Record) -> str:
    return f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}"


@dataclass(frozen=True)
class JudgedTiming:
    """One timing figure judged: the two timings themselves (raw samples and rounds, as the timer gave them and the
    records kept them), what changed, against which noise, and why it was or was not called."""

    label: str
    method: str  # "sustained" | "isolated"
    reference: str  # "raw" | "relative to the run's own baseline"
    base: Timing
    new: Timing
    judgement: stats.TimingJudgement

    @property
    def base_us(self) -> float:
        return self.base.median

    @property
    def new_us(self) -> float:
        return self.new.median

    def detail(self) -> str:
        j = self.judgement
        if j.sigma is None:
            return j.reason
        return (
            f"{100 * (j.ratio - 1):+.1f}% {self.reference}; noise σ {100 * j.sigma:.1f}% ({j.noise_source}); {j.reason}"
        )


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _timing_of(entry: Runtime | Baseline, method: str) -> Timing:
    """The entry's timing by that method (every side of a judged pair holds it: :func:`judge` chose the method)."""
    timing = entry.sustained if method == "sustained" else entry.timing
    assert timing is not None, f"no {method} timing"
    return timing


def baselines(records: Sequence[Record]) -> dict[tuple[str, ...], Baseline]:
    """Per case (kernel, dtype, shape, target): the primary baseline's runtime entry in the same run."""
    out: dict[tuple[str, ...], Baseline] = {}
    for r in records:
        if r.mode != "tune" or r.runtime is None:
            continue
        for base in (r.runtime.baselines or {}).values():
            if isinstance(base, Baseline) and base.status == "ok" and _positive((base.timing or Timing()).median_us):
                out[(r.kernel, r.dtype, r.shape_id, r.target)] = base
                break
    return out


def _estimate(runtime: Runtime, method: str, base: Baseline | None) -> stats.Estimate | None:
    from harness.model.timings import round_ratios

    timing = _timing_of(runtime, method)
    if base is None:
        return stats.estimate(timing)
    ref_timing = _timing_of(base, method)
    ref = stats.estimate(ref_timing)
    if ref is None:
        return None
    paired = round_ratios(timing.round_medians_us or (), ref_timing.round_medians_us or ())
    return stats.estimate(timing, ref, paired)


def judge(
    pairs: Sequence[tuple[Record, Record]],
    base: Sequence[Record],
    new: Sequence[Record],
    threshold: float,
    fdr: float,
    normalise: bool,
    thresholds: dict[str, float],
    history: HistoryNoise | None = None,
    floor: float = stats.NOISE_FLOOR,
) -> list[JudgedTiming]:
    """Every (base, new) pair of fully timed records, judged together."""
    ref_a, ref_b = (baselines(base), baselines(new)) if normalise else ({}, {})
    rows: list[tuple[str, str, str, Timing, Timing]] = []
    family: list[tuple[stats.Estimate | None, stats.Estimate | None, float, float | None]] = []
    for ra, rb in pairs:
        case = (ra.kernel, ra.dtype, ra.shape_id, ra.target)
        ba, bb = ref_a.get(case), ref_b.get(case)
        normalised = ba is not None and bb is not None
        rta, rtb = ra.runtime or Runtime(), rb.runtime or Runtime()  # timed pairs only: both runtimes are entries
        sides: tuple[Runtime | Baseline | None, ...] = (rta, rtb, *((ba, bb) if normalised else ()))
        method = "sustained" if all(x is not None and isinstance(x.sustained, Timing) for x in sides) else "isolated"
        ea = _estimate(rta, method, ba if normalised else None)
        eb = _estimate(rtb, method, bb if normalised else None)
        series = f"{ra.kernel} {ra.dtype} {ra.shape_id} {ra.column} {ra.config_id}"
        hist = history(series, method, normalised) if history else None
        rows.append(
            (
                label(ra),
                method,
                "relative to the run's own baseline" if normalised else "raw",
                _timing_of(rta, method),
                _timing_of(rtb, method),
            )
        )
        family.append((ea, eb, thresholds.get(ra.kernel, threshold), hist))
    return [JudgedTiming(*row, j) for row, j in zip(rows, stats.judge_family(family, fdr, floor))]
