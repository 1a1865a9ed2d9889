"""The roof a measured kernel is held against, decided once for every report.

A kernel's FLOP and byte models (``KernelSpec.flops`` / ``min_bytes``, recorded by the GPU
phase as ``runtime["model"]``) give its arithmetic intensity; the device's ridge point (its
peak FLOP/s of the case's math dtype over its HBM bandwidth) says which roof is the ceiling.
Below the ridge the kernel is memory-bound: its rate is GB/s and its share is of the HBM
peak (and, named as such, of the copy bandwidth measured in the same run); above it, TFLOP/s
against the peak **of its dtype** (fp8 against fp8, not fp16). The peaks are always those of
the device that ran, found in the catalogue by its name, also under ``--device-as`` (which maps
tuned winners, never peaks). Vendor evaluation, report.html, report.md, CSV and the terminal
all read :func:`roof_of`; nothing else computes a share of a peak.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from harness.model.records import Record
from harness.model.runtime import DeviceInfo, GpuSlot, Runtime
from harness.model.targets import Target, catalogue

MEMORY, COMPUTE = "memory", "compute"


@dataclass(frozen=True)
class Roof:
    bound: str  # MEMORY | COMPUTE
    rate: float  # GB/s when memory-bound, TFLOP/s when compute-bound
    unit: str  # "GB/s" | "TFLOP/s"
    peak: float | None  # the roof, in ``unit`` (None: the catalogue has no peak of this math)
    pct: float | None  # rate as a share of ``peak``, in percent
    intensity: float  # FLOP per byte of the kernel's models
    ridge: float | None  # FLOP per byte where the device's two roofs meet
    math: str  # the dtype whose FLOP peak is the compute roof
    device: str  # the catalogue entry whose peaks are used
    copy_pct: float | None = None  # memory-bound: share of the copy bandwidth measured in the run
    note: str = ""  # how the device was matched, when not by its own name

    @property
    def share_text(self) -> str:
        """``86% of h200 HBM peak (91% of measured copy)`` / ``62% of h200 fp16 peak`` ('' without a peak)."""
        if self.pct is None:
            return f"no {self.math} peak for {self.device} in the catalogue"
        roof = "HBM" if self.bound == MEMORY else self.math
        copy = f" ({self.copy_pct:.0f}% of the measured copy bandwidth)" if self.copy_pct is not None else ""
        return f"{self.pct:.0f}% of {self.device} {roof} peak{copy}"

    @property
    def label(self) -> str:
        """``4120 GB/s, memory-bound, 86% of h200 HBM peak``."""
        return f"{self.rate:.4g} {self.unit}, {self.bound}-bound, {self.share_text}"


def math_dtype(dtype: str) -> str:
    """The math a case's dtype runs on: fp8 formats share the fp8 peak; bf16 and fp16 the fp16 one."""
    return "fp8" if dtype.startswith("fp8") else dtype


def device_target(gpu_name: str, arch: str, fallback: str) -> tuple[Target, str]:
    """The catalogue entry of the device that ran (matched by its name), and a note when it had to fall back."""
    for t in catalogue().values():
        if t.arch == arch and any(re.search(p, gpu_name or "", re.I) for p in t.models):
            return t, ""
    return catalogue()[fallback], f"{gpu_name or 'the device'} is not in the catalogue: {fallback}'s peaks"


def model_of(r: Record) -> tuple[float, float] | None:
    """(FLOPs, bytes) of a tune record's case: the recorded models, or derived from older records' rates. None
    where the kernel has neither model (a captured op): no roof, rather than 0% of one."""
    rt = r.runtime or Runtime()
    model = rt.model
    if model is not None and isinstance(model.bytes, (int, float)):
        if not model.flops and not model.bytes:
            return None
        return float(model.flops or 0.0), float(model.bytes)
    median = rt.median_us
    if isinstance(median, (int, float)) and median > 0 and isinstance(rt.gbps, (int, float)):
        seconds = median * 1e-6
        return float(rt.tflops or 0.0) * 1e12 * seconds, float(rt.gbps) * 1e9 * seconds
    return None


def roof(
    flops: float,
    nbytes: float,
    median_us: float,
    dtype: str,
    device: Target,
    copy_tbps: float | None = None,
    note: str = "",
) -> Roof:
    """The roof of one timing: which ceiling applies, the rate in its unit, and the share of it."""
    math_ = math_dtype(dtype)
    peak_flops = device.peak_tflops(math_)
    intensity = flops / nbytes if nbytes > 0 else math.inf
    ridge = peak_flops / device.hbm_tbps if peak_flops else None  # TFLOP/s over TB/s: FLOP per byte
    seconds = median_us * 1e-6
    # memory-bound below the ridge; a dtype without a FLOP peak here is held against the memory roof
    if nbytes > 0 and (ridge is None or intensity < ridge):
        rate, peak = nbytes / seconds / 1e9, device.hbm_tbps * 1000
        copy_pct = 100 * rate / (1000 * copy_tbps) if copy_tbps else None
        return Roof(MEMORY, rate, "GB/s", peak, 100 * rate / peak, intensity, ridge, math_, device.name, copy_pct, note)
    rate = flops / seconds / 1e12
    return Roof(
        COMPUTE,
        rate,
        "TFLOP/s",
        peak_flops,
        100 * rate / peak_flops if peak_flops else None,
        intensity,
        ridge,
        math_,
        device.name,
        None,
        note,
    )


def roof_of(r: Record, median_us: float | None = None) -> Roof | None:
    """The roof of a tune record's winner (or of another timing of the same case, ``median_us``)."""
    rt = r.runtime or Runtime()
    model = model_of(r)
    median = median_us if median_us is not None else rt.median_us
    if r.mode != "tune" or model is None or not isinstance(median, (int, float)) or median <= 0:
        return None
    gpu: DeviceInfo | GpuSlot = rt.device if rt.device is not None else rt.gpu or GpuSlot()
    device, note = device_target(str(gpu.name or ""), str(gpu.arch or r.arch), r.target)
    return roof(model[0], model[1], float(median), r.dtype, device, rt.copy_tbps, note)
