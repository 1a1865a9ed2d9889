"""The points and roofs of a roofline chart per device: each tuned case's winner and its baselines at the case's
arithmetic intensity (FLOP per byte of the kernel's models) against the device's bandwidth roof and its compute
roof for each dtype the cases used — the peaks of the catalogue entry the run was held against
(:mod:`harness.analysis.roofline`).

A memory-bound figure is a rate in GB/s; on the chart every point is in TFLOP/s (the rate times the intensity),
so winners and baselines of every case share one plane. A baseline does the same work as the winner, so its
point sits at the same intensity.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.figures import Measured
from harness.analysis.roofline import MEMORY
from harness.model import targets


@dataclass(frozen=True)
class Point:
    label: str
    intensity: float  # FLOP per byte
    tflops: float
    winner: bool  # the tuned winner (else a baseline)


@dataclass(frozen=True)
class DeviceRoofline:
    device: str
    bandwidth_tbps: float  # the HBM roof, TB/s (= TFLOP/s per FLOP/byte)
    compute: tuple[tuple[str, float], ...]  # (math dtype, TFLOP/s roof) for the dtypes the cases used
    points: tuple[Point, ...]


def _tflops(rate: float, bound: str, intensity: float) -> float:
    return rate * intensity / 1000.0 if bound == MEMORY else rate


def rooflines(measured: Sequence[Measured]) -> list[DeviceRoofline]:
    by_device: dict[str, list[Measured]] = defaultdict(list)
    for m in measured:
        if m.roof.intensity > 0:
            by_device[m.roof.device].append(m)
    out = []
    several = len({m.host for m in measured}) > 1  # a merge of hosts: each point says whose it is
    for device, items in sorted(by_device.items()):
        try:
            t = targets.get(device)
        except Exception:  # noqa: BLE001 - a device the catalogue lacks has no roofs to draw
            continue
        maths = sorted({m.roof.math for m in items})
        compute = tuple((k, float(v)) for k in maths if (v := getattr(t, f"{k}_tflops", None)))
        points = []
        for m in items:
            case = f"{m.kernel} {m.dtype} {m.shape_id}" + (f" ({m.host}, triton {m.triton})" if several else "")
            points.append(
                Point(
                    f"{case}: {m.config_id}",
                    m.roof.intensity,
                    _tflops(m.roof.rate, m.roof.bound, m.roof.intensity),
                    True,
                )
            )
            for name, rate, _ in m.baselines:
                points.append(
                    Point(f"{case}: {name}", m.roof.intensity, _tflops(rate, m.roof.bound, m.roof.intensity), False)
                )
        out.append(DeviceRoofline(device, float(t.hbm_tbps), compute, tuple(points)))
    return out
