"""Is a timing change between two runs real? Judged with the run as the unit, the family controlled.

Two runs of the same code on the same GPU differ by a few percent per figure (clocks, power,
placement); within one run the samples agree far more closely. A test on the raw samples of two
processes therefore finds "significant" shifts in A/A pairs (H200: +5.6 %, p = 2e-60), so the
samples only estimate each run's figure and how precisely (its *within-run spread*); the change
is judged against the noise between runs:

* ``sigma`` (of the log ratio of two runs' figures) is the largest of: the night-to-night noise
  of that figure in the history file (√2 × the robust spread of its nights, five nights or more),
  else the documented floor ``NOISE_FLOOR``, measured between separate runs on the H200
  (docs/performance.md, runs AJ–AL); and the two runs' own within-run spreads combined;
* ``p`` = two-sided normal tail of ``ln(ratio) / sigma``; Benjamini–Hochberg over every figure
  judged in the comparison (``scipy.stats.false_discovery_control``) controls the false
  discoveries of the family at ``fdr``;
* a change is called only when it is both beyond ``threshold`` and discovered; with fewer than
  ``MIN_SAMPLES`` samples on a side no p-value is computed: "not judged" (asv's guard).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from harness.model.runtime import Timing

MIN_SAMPLES = 5
#: the between-run noise (σ of the log ratio of one figure in two runs of the same code) assumed with no history
NOISE_FLOOR = 0.02
MIN_HISTORY_NIGHTS = 5


@dataclass(frozen=True)
class Estimate:
    """One run's figure: its value (µs, or a ratio to the run's baseline) and the relative standard error."""

    value: float
    spread: float
    samples: int


def robust_sd(values: Sequence[float]) -> float:
    """1.4826 × the median absolute deviation: a standard deviation a stray sample cannot inflate."""
    if len(values) < 2:
        return 0.0
    mid = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - mid) for v in values)


def estimate(timing: Timing, scale: Estimate | None = None, paired: Sequence[float] = ()) -> Estimate | None:
    """A run's figure from a timing (``samples_us``, ``round_medians_us``): the median, and the standard error of
    its log — from the interleaved rounds where there are three or more, else from the samples. ``scale``: the
    run's baseline (the figure becomes a ratio); ``paired``: that ratio per interleaved round, whose own spread
    then replaces the combined one."""
    samples = [float(x) for x in timing.samples_us or () if isinstance(x, (int, float)) and x > 0]
    if not samples:
        return None
    value = statistics.median(samples)
    rounds = [float(x) for x in timing.round_medians_us or () if isinstance(x, (int, float)) and x > 0]
    if len(rounds) >= 3:
        spread = robust_sd([math.log(x) for x in rounds]) / math.sqrt(len(rounds))
    else:  # the standard error of a median: 1.2533 sd / sqrt(n)
        spread = 1.2533 * robust_sd([math.log(x) for x in samples]) / math.sqrt(len(samples))
    if scale is None:
        return Estimate(value, spread, len(samples))
    if len(paired) >= 3:
        logs = [math.log(x) for x in paired if x > 0]
        spread = robust_sd(logs) / math.sqrt(len(logs))
    else:
        spread = math.hypot(spread, scale.spread)
    return Estimate(value / scale.value, spread, min(len(samples), scale.samples))


def history_sigma(nights: Sequence[float]) -> float | None:
    """σ of the log ratio of two nights of a figure, from its stored nights (None with too few)."""
    good = [math.log(v) for v in nights if v > 0]
    if len(good) < MIN_HISTORY_NIGHTS:
        return None
    return math.sqrt(2.0) * robust_sd(good)


@dataclass(frozen=True)
class TimingJudgement:
    verdict: str  # "slower" | "faster" | "same" | "noise" | "not judged"
    ratio: float  # new / base
    sigma: float | None  # the noise (σ of the log ratio) it was judged against
    noise_source: str  # where sigma came from
    p_value: float | None
    p_adjusted: float | None = None  # Benjamini–Hochberg over the family
    reason: str = ""

    @property
    def worse(self) -> bool:
        return self.verdict == "slower"


def noise(base: Estimate, new: Estimate, history: float | None = None, floor: float = NOISE_FLOOR) -> tuple[float, str]:
    within = math.hypot(base.spread, new.spread)
    between, source = (history, "history") if history is not None else (floor, "floor")
    return (within, "within-run spread") if within > between else (max(between, 1e-4), source)


def judge_family(
    pairs: Sequence[tuple[Estimate | None, Estimate | None, float, float | None]],
    fdr: float = 0.05,
    floor: float = NOISE_FLOOR,
) -> list[TimingJudgement]:
    """Judge every figure of a comparison together. Each pair: (base, new, threshold, history sigma or None)."""
    from scipy import stats

    prelim: list[tuple[float, float, str, float] | None] = []
    for base, new, _, hist in pairs:
        if base is None or new is None or min(base.samples, new.samples) < MIN_SAMPLES:
            prelim.append(None)
            continue
        ratio = new.value / base.value
        sigma, source = noise(base, new, hist, floor)
        p = float(2.0 * stats.norm.sf(abs(math.log(ratio)) / sigma))
        prelim.append((ratio, sigma, source, p))
    judged = [x[3] for x in prelim if x is not None]
    adjusted = iter(stats.false_discovery_control(judged, method="bh").tolist() if judged else [])
    out: list[TimingJudgement] = []
    for (base, new, threshold, _), pre in zip(pairs, prelim):
        if pre is None:
            n = min(base.samples if base else 0, new.samples if new else 0)
            ratio = new.value / base.value if base and new else math.nan
            out.append(
                TimingJudgement(
                    "not judged",
                    ratio,
                    None,
                    "",
                    None,
                    reason=f"{n} sample(s) on a side, fewer than {MIN_SAMPLES}: no p-value",
                )
            )
            continue
        ratio, sigma, source, p = pre
        q = float(next(adjusted))
        change = abs(ratio - 1.0)
        if change <= threshold:
            verdict, reason = "same", f"within the {100 * threshold:.0f}% threshold"
        elif q >= fdr:
            verdict, reason = "noise", f"beyond the threshold, not discovered at FDR {fdr:g} (q={q:.2g})"
        else:
            verdict = "slower" if ratio > 1 else "faster"
            reason = f"beyond the threshold and discovered at FDR {fdr:g} (q={q:.2g})"
        out.append(TimingJudgement(verdict, ratio, sigma, source, p, q, reason))
    return out
