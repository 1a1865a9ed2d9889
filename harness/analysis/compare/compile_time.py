"""Compile cost from pin X to pin Y, judged only like with like.

A build's time depends on whether Triton compiled it (cold, a cache miss) or loaded it from
its cache (warm, a hit), and wall time depends on what else shared the cores: the same pin
compiled on a quiet and on a loaded 2-core machine differed by +333% in wall time. So the
judged figure is the **CPU time of the compile** (user + system of the compile worker and the
tools it waited for, ``Record.compile_cpu_s``) of builds that were cold in both runs, and only
between runs on the same kind of machine (``RunInfo.cpu``: CPU model and count); warm loads are
summarised, never judged. Records from before CPU time was kept fall back to Triton's own
lowering time (its stage listener's wall time), and the line says so. Each config gives one pair
(one compile per run), so the test is across configs: a two-sided sign test on the per-config
ratios, with the geometric mean as the size of the change, and where it sits (the kernels and
targets furthest from 1). Too few cold pairs, a release that reports neither figure, or two
machine kinds gives "not judged" with the reason — never a silent pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import median
from typing import Sequence

from harness.model.records import Record

MIN_PAIRS = 10
MIN_GROUP = 3  # pairs a kernel x target needs before its own ratio is shown
CPU = "CPU time of each cold compile (user + system, with ptxas/linker)"
LOWERING = "Triton's lowering wall time per cold build (stage listener; these records have no CPU time)"


@dataclass(frozen=True)
class CompileTimeJudgement:
    verdict: str  # "slower" | "faster" | "same" | "noise" | "not judged"
    reason: str = ""  # why not judged
    pairs: int = 0  # configs cold in both runs, with stage times in both
    ratio: float | None = None  # geometric mean of new / base lowering time over the pairs
    p_value: float | None = None
    cold_median_s: tuple[float | None, float | None] = (None, None)  # median lowering time per cold build
    warm_median_s: tuple[float | None, float | None] = (None, None)  # median load time per warm build
    builds: dict[str, tuple[int, int]] = field(default_factory=dict)  # "cold" / "warm" / "unknown": base, new
    stages: dict[str, float] = field(default_factory=dict)  # geometric mean ratio per lowering stage
    where: tuple[tuple[str, float, int], ...] = ()  # (kernel target, ratio, pairs): the groups furthest from 1
    measure: str = CPU  # what was compared: CPU or LOWERING
    threshold: float = 0.5

    @property
    def worse(self) -> bool:
        return self.verdict == "slower"

    def line(self) -> str:
        (cb, cn), (wb, wn) = self.cold_median_s, self.warm_median_s
        counts = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in self.builds.items() if a or b)
        head = f"compile time ({counts})"
        if cb is not None and cn is not None:
            head += f": {self.measure}, median {cb * 1e3:.0f} -> {cn * 1e3:.0f} ms"
        if wb is not None and wn is not None:
            head += f", warm load median {wb * 1e3:.1f} -> {wn * 1e3:.1f} ms"
        if self.verdict == "not judged":
            return f"{head}; not judged: {self.reason}"
        slowest = max(self.stages.items(), key=lambda kv: kv[1], default=None)
        where = (
            f", most in {slowest[0]} ({100 * (slowest[1] - 1):+.0f}%)" if slowest and self.verdict == "slower" else ""
        )
        if self.where and self.verdict != "same":
            where += "; by kernel and target: " + ", ".join(f"{g} x{r:.2f} ({n})" for g, r, n in self.where)
        size = f"{100 * ((self.ratio or 1) - 1):+.1f}% over {self.pairs} cold pairs (sign test p={self.p_value:.1e})"
        if self.verdict == "same":
            return f"{head}; {size}: within the ±{100 * self.threshold:.0f}% threshold, not a regression"
        return f"{head}; {self.verdict}: {size}{where}"


def sign_test_p(ups: int, downs: int) -> float:
    """Two-sided exact binomial p-value of ``ups`` against ``downs`` under p = 1/2 (ties dropped)."""
    n = ups + downs
    if n == 0:
        return 1.0
    k = min(ups, downs)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * float(tail))


def _lowering_s(r: Record) -> float | None:
    stages = r.compile_stages_s if isinstance(r.compile_stages_s, dict) else {}
    values = [v for v in stages.values() if isinstance(v, (int, float)) and math.isfinite(v) and v >= 0]
    total = sum(values)
    return total if values and total > 0 else None


def _cpu_s(r: Record) -> float | None:
    x = r.compile_cpu_s
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) and x > 0 else None


def _kind(r: Record) -> str:
    # "harness": taken from the harness's result cache, no compile at all in this run
    return {"miss": "cold", "hit": "warm", "harness": "warm"}.get(r.compile_cache or "", "unknown")


def _geomean(ratios: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in ratios) / len(ratios))


def judge(
    pairs: Sequence[tuple[Record, Record]],
    threshold: float = 0.5,
    alpha: float = 0.001,
    machines: tuple[str | None, str | None] = (None, None),
) -> CompileTimeJudgement:
    """``pairs``: matched (base, new) compile records that built in both runs; ``machines``: each run's machine kind
    (``RunInfo.cpu``), None where the run did not record it."""
    built = [(a, b) for a, b in pairs if a.status == "ok" and b.status == "ok"]
    builds = {
        k: (sum(1 for a, _ in built if _kind(a) == k), sum(1 for _, b in built if _kind(b) == k))
        for k in ("cold", "warm", "unknown")
    }
    cold_both = [(a, b) for a, b in built if _kind(a) == _kind(b) == "cold"]
    has_cpu = any(_cpu_s(r) for pair in built for r in pair)  # records from before CPU time: the lowering time
    measure, figure = (CPU, _cpu_s) if has_cpu else (LOWERING, _lowering_s)

    def med(values: list[float]) -> float | None:
        return median(values) if values else None

    cold = (
        med([x for a, _ in built if _kind(a) == "cold" and (x := figure(a))]),
        med([x for _, b in built if _kind(b) == "cold" and (x := figure(b))]),
    )
    warm = (
        med([a.compile_s for a, _ in built if _kind(a) == "warm" and a.compile_s]),
        med([b.compile_s for _, b in built if _kind(b) == "warm" and b.compile_s]),
    )
    usable = [(a, b) for a, b in cold_both if figure(a) and figure(b)]
    base = CompileTimeJudgement(
        "not judged",
        pairs=len(usable),
        cold_median_s=cold,
        warm_median_s=warm,
        builds=builds,
        measure=measure,
        threshold=threshold,
    )
    if machines[0] and machines[1] and machines[0] != machines[1]:
        why = f"the runs were made on different machines ({machines[0]}; {machines[1]}): compare compiles on one kind"
        return replace(base, reason=why)
    if len(usable) < MIN_PAIRS:
        why = (
            f"{len(usable)} config(s) compiled cold in both runs with "
            + ("their CPU time" if has_cpu else "Triton's stage times")
            + f", {MIN_PAIRS} needed"
            + (
                "; a warm run loads from Triton's cache: compare runs made from empty caches"
                if builds["warm"][0] or builds["warm"][1]
                else ""
            )
            + (
                "; a Triton without a compilation listener reports neither cache use nor stage times"
                if builds["unknown"][0]
                or builds["unknown"][1]
                or any(_kind(r) == "cold" and not figure(r) for pair in built for r in pair)
                else ""
            )
        )
        return replace(base, reason=why)
    ratios = [figure(b) / figure(a) for a, b in usable]  # type: ignore[operator]
    ratio = _geomean(ratios)
    p = sign_test_p(sum(1 for x in ratios if x > 1), sum(1 for x in ratios if x < 1))
    stages: dict[str, list[float]] = {}
    groups: dict[str, list[float]] = {}
    for (a, b), x in zip(usable, ratios):
        groups.setdefault(f"{a.kernel} {a.column}", []).append(x)
        for name, tb in b.compile_stages_s.items():
            ta = a.compile_stages_s.get(name)
            if isinstance(ta, (int, float)) and isinstance(tb, (int, float)) and ta > 0 and tb > 0:
                stages.setdefault(name, []).append(tb / ta)
    per_stage = {k: round(_geomean(v), 3) for k, v in stages.items() if len(v) >= MIN_PAIRS}
    per_group = sorted(
        ((g, _geomean(v), len(v)) for g, v in groups.items() if len(v) >= MIN_GROUP),
        key=lambda t: (-abs(math.log(t[1])), t[0]),
    )
    if abs(ratio - 1) <= threshold:
        verdict = "same"
    elif p >= alpha:
        verdict = "noise"
    else:
        verdict = "slower" if ratio > 1 else "faster"
    return replace(base, verdict=verdict, ratio=ratio, p_value=p, stages=per_stage, where=tuple(per_group[:4]))
