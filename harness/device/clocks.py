"""The SM clock and the power-cap state while the sustained rounds run, per item.

Run CA (docs/performance.md) found why two kernels' sustained ratio can disagree with a ratio timed apart: at
the chip's power cap each kernel holds its own SM clock (our flash attention near 1,830 MHz, cuDNN's SDPA near
1,530 MHz at the same ~690 W), and the clock follows a switch between them 50-100 ms late. A figure timed there is
the kernel's time at its own capped clock, which a short burst (Triton's ``do_bench_cudagraph``: about 20 ms
after its warm-up) does not reach. So the rounds say, per item, what clock its timed batches ran at and whether
the chip was power-capped meanwhile: a reader then knows which figure is a power-capped one and why two methods
part.

How: a host thread samples NVML (SM clock, throttle reasons) every ``PERIOD_S`` with the host's monotonic clock;
the rounds record one event on an idle GPU at a known host time (``anchor``), so every batch's start and end
events map to host time (``anchor + elapsed``), and each sample falls in the batch it was read during. NVML
refreshes its readings every few tens of milliseconds, so an item's figure is the median over all its batches of
all rounds, not a per-batch reading. Where NVML is absent (ROCm, no ``pynvml``), nothing is read and nothing is
claimed.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any

PERIOD_S = 0.005
#: NVML's clocks-event reason bits that mean a power limit holds the clock down (software or hardware cap)
POWER_CAP_BITS = 0x4 | 0x80  # SW_POWER_CAP | HW_POWER_BRAKE_SLOWDOWN


@dataclass(frozen=True)
class ItemClock:
    """What the chip ran at while one item's timed batches ran."""

    sm_mhz: float  # median SM clock over the NVML samples that fell in the item's timed batches
    power_capped: float  # the share of those samples with a power-cap reason set
    samples: int


class ClockTrace:
    """NVML samples taken on a host thread between :meth:`start` and :meth:`stop` (none where NVML is absent)."""

    def __init__(self, device_uuid: str | None = None) -> None:
        self.samples: list[tuple[float, int, int]] = []  # (host monotonic s, SM MHz, reason bits)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handle: Any = None
        self._nvml: Any = None
        try:
            import pynvml  # nvidia-ml-py

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = self._find(pynvml, device_uuid)
        except Exception:  # noqa: BLE001 - no NVML here (ROCm, no package, no driver): no trace, no claim
            self._nvml = None

    @staticmethod
    def _find(pynvml: Any, uuid: str | None) -> Any:
        if uuid:
            want = uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
            return pynvml.nvmlDeviceGetHandleByUUID(want)
        return pynvml.nvmlDeviceGetHandleByIndex(0)

    @property
    def available(self) -> bool:
        return self._nvml is not None and self._handle is not None

    def _read(self) -> tuple[float, int, int]:
        nvml, h = self._nvml, self._handle
        mhz = nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)
        reasons = nvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        return time.perf_counter(), int(mhz), int(reasons)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(self._read())
            except Exception:  # noqa: BLE001 - a failed read is a missing sample
                pass
            self._stop.wait(PERIOD_S)

    def start(self) -> None:
        if self.available:
            self._thread = threading.Thread(target=self._loop, name="harness-clocks", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=1.0)


def per_item(
    samples: list[tuple[float, int, int]], windows: dict[str, list[tuple[float, float]]]
) -> dict[str, ItemClock]:
    """Each item's clock: the samples read inside its timed batches' host-time windows."""
    out: dict[str, ItemClock] = {}
    ordered = sorted(samples)
    for name, spans in windows.items():
        inside = [(mhz, bits) for t, mhz, bits in ordered if any(a <= t <= b for a, b in spans)]
        if inside:
            out[name] = ItemClock(
                sm_mhz=float(statistics.median(m for m, _ in inside)),
                power_capped=round(sum(1 for _, bits in inside if bits & POWER_CAP_BITS) / len(inside), 3),
                samples=len(inside),
            )
    return out
