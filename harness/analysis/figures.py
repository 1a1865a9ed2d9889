"""What the GPU phase measured, per case: each device's (and Triton version's) tuned winner with its
rate and share of its roof (:mod:`harness.analysis.roofline`: memory- or compute-bound, the dtype's peak, the
device that ran), its baselines in the same unit, and the tuning-portability penalty (another
target's winner, or the other vendor space's best, run on this device)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from harness.analysis import portability
from harness.analysis.roofline import Roof, roof_of
from harness.model.records import Record
from harness.model.runtime import Baseline, GpuSlot, PortabilityEntry
from harness.model.timings import headline


@dataclass(frozen=True)
class Measured:
    """One tuned case on one device with one Triton."""

    kernel: str
    dtype: str
    shape_id: str
    target: str
    vendor: str
    triton: str
    host: str
    gpu: str
    config_id: str
    median_us: float
    roof: Roof  # memory- or compute-bound, the rate in that roof's unit, the share of its peak
    baselines: tuple[tuple[str, float, float | None], ...]  # (name, rate, speedup of the winner over it)
    penalties: tuple[tuple[str, float, str], ...]  # (other target, slowdown on this device, source)
    method: str = "isolated"  # how median_us was timed: "sustained" (back to back) or "isolated" (older runs)

    @property
    def case(self) -> tuple[str, str, str]:
        return self.kernel, self.dtype, self.shape_id

    @property
    def rate(self) -> float:
        return self.roof.rate

    @property
    def unit(self) -> str:
        return self.roof.unit

    @property
    def pct_peak(self) -> float | None:
        return self.roof.pct


def measured(records: list[Record]) -> list[Measured]:
    """Every ok tune record as a :class:`Measured`, in a stable order."""
    out = []
    for r in records:
        rt = r.runtime
        roof = roof_of(r)
        if r.mode != "tune" or r.status != "ok" or not rt or not rt.median_us or roof is None:
            continue
        baselines = []
        for name, b in (rt.baselines or {}).items():
            median = headline(b)[0].median_us if isinstance(b, Baseline) else None
            if isinstance(b, Baseline) and b.status == "ok" and isinstance(median, (int, float)) and median > 0:
                base_roof = roof_of(r, float(median))
                baselines.append((name, base_roof.rate if base_roof else 0.0, b.speedup))
        penalties = tuple(
            (other, float(p.slowdown), str(p.source or ""))
            for other, p in sorted(portability.of(r, records).items())
            if isinstance(p, PortabilityEntry) and isinstance(p.slowdown, (int, float))
        )
        gpu = rt.gpu.name if isinstance(rt.gpu, GpuSlot) else None
        out.append(
            Measured(
                r.kernel,
                r.dtype,
                r.shape_id,
                r.target,
                r.vendor,
                r.triton,
                r.host,
                str(gpu or r.target),
                r.config_id,
                float(rt.median_us),
                roof,
                tuple(baselines),
                penalties,
                str(rt.timing_method or "isolated"),
            )
        )
    return sorted(out, key=lambda m: (m.kernel, m.dtype, m.shape_id, m.target, m.triton, m.host))


def by_case(items: list[Measured]) -> dict[tuple[str, str, str], list[Measured]]:
    grouped: dict[tuple[str, str, str], list[Measured]] = defaultdict(list)
    for m in items:
        grouped[m.case].append(m)
    return dict(grouped)
