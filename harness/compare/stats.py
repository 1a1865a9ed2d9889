"""Statistics for timing comparisons, in plain Python (no scipy): is a change real, and how large?

A change is a regression only when it is both large (the ratio of medians beyond the
threshold) and significant (a two-sided Mann–Whitney U test on the raw samples at a
strict level), as asv judges benchmarks: noise can move a median by a few percent,
and a tiny but consistent shift is not worth failing a build over.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median
from typing import Sequence

MIN_SAMPLES = 5


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann–Whitney U test (normal approximation with tie and continuity correction)."""
    n1, n2 = len(a), len(b)
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        rank = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[k] = rank
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u1 - mean) - 0.5) / math.sqrt(var)
    return max(0.0, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


@dataclass(frozen=True)
class TimingJudgement:
    verdict: str          # "slower" | "faster" | "same" | "noise" | "too few samples"
    ratio: float          # new median / base median (after normalisation, if any)
    p_value: float | None

    @property
    def worse(self) -> bool:
        return self.verdict == "slower"


def judge(base: Sequence[float], new: Sequence[float], threshold: float = 0.05, alpha: float = 0.001,
          base_scale: float = 1.0, new_scale: float = 1.0) -> TimingJudgement:
    """Judge two sample sets; ``*_scale`` divide each run's samples by its reference (same-run normalisation).

    ``same``: the medians are within the threshold; ``noise``: beyond it, but the samples do not
    differ significantly; ``slower`` / ``faster``: beyond the threshold and significant.
    """
    a = [x / base_scale for x in base if math.isfinite(x)]
    b = [x / new_scale for x in new if math.isfinite(x)]
    if len(a) < MIN_SAMPLES or len(b) < MIN_SAMPLES:
        return TimingJudgement("too few samples", median(b) / median(a) if a and b else math.nan, None)
    ratio = median(b) / median(a)
    p = mann_whitney_p(a, b)
    if abs(ratio - 1.0) <= threshold:
        return TimingJudgement("same", ratio, p)
    if p >= alpha:
        return TimingJudgement("noise", ratio, p)
    return TimingJudgement("slower" if ratio > 1 else "faster", ratio, p)
