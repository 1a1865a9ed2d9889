"""Timing kernels on a GPU, two ways, each named in every figure it gives.

``isolated``: one launch per sample, the L2 flushed (a read of twice its size) and the GPU kept busy
by a short spin before it, so each sample sees a cold cache and no host gap — what a kernel costs
when it runs alone after unrelated work. ``sustained``: launches back to back over rotated inputs
larger than the last-level cache, captured in one CUDA/HIP graph of many launches where the kernel
allows it — what it costs inside a model's steady stream of work, and the figure rates are taken
from. On the H200 the two differ by 4–12% for large GEMMs (docs/performance.md).

Clean samples: every CUDA event is created (recorded once) before sampling — torch creates an
event lazily on its first ``record()``, which used to land in sample 0 — and the first
``WARMUP_SAMPLES`` samples of every set are taken and discarded, by rule. Each timing keeps its raw
samples and says whether it is stable (IQR / median within ``STABLE_IQR``). Works on CUDA and ROCm
torch alike (``torch.cuda`` is HIP on ROCm).
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

from harness.model.runtime import Timing
from harness.model.timings import STABLE_IQR
from harness.support import torchcompat

#: samples taken first and dropped from every sample set (the first after a settle or a round start)
WARMUP_SAMPLES = 2


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values."""
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(
    samples: list[float],
    method: str = "isolated",
    rotated: int = 1,
    graph: bool = False,
    discarded: int = 0,
    launches: int = 1,
    rounds: list[float] | None = None,
    note: str = "",
) -> Timing:
    ordered = sorted(samples)
    med = statistics.median(ordered)
    iqr = (quantile(ordered, 0.75) - quantile(ordered, 0.25)) / med if med > 0 else float("inf")
    return Timing(
        method=method,
        samples_us=tuple(round(s, 3) for s in samples),
        median_us=med,
        p20_us=quantile(ordered, 0.2),
        p80_us=quantile(ordered, 0.8),
        reps=len(samples),
        rotated_buffers=rotated,
        graph=graph,
        warmup_discarded=discarded,
        iqr_over_median=round(iqr, 5),
        stable=iqr <= STABLE_IQR,
        launches_per_sample=launches,
        round_medians_us=tuple(round(r, 3) for r in rounds or []),
        note=note,
    )


class Flusher:
    """Reads a buffer twice the L2's size: the next kernel starts with a cold L2 holding only clean lines.

    Writing the buffer (``zero_()``) would also evict the kernel's data, but would leave the L2
    full of dirty lines that are written back while the timed kernel runs — measured on the H200
    (``benchmarks/l2_flush.py``, docs/performance.md) as a few microseconds added to every sample.
    """

    def __init__(self, l2_bytes: int) -> None:
        import torch

        self.buf = torch.ones(max(2 * l2_bytes, 64 << 20) // 4, dtype=torch.int32, device="cuda")
        self.sink = torch.zeros((), dtype=torch.int64, device="cuda")

    def __call__(self) -> None:
        import torch

        torch.sum(self.buf, dim=0, out=self.sink)  # a read of every line; one 8-byte write


def events(n: int) -> list[Any]:
    """``n`` timing events, each created now (recorded once and synchronised), not on first use while timed."""
    import torch

    made = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for e in made:
        e.record()
    torch.cuda.synchronize()
    return made


def settle(calls: list[Callable[[], Any]], settle_ms: float, prepare: Callable[[int], None] | None = None) -> None:
    """Run back to back for ``settle_ms``: the clocks then sit at their sustained level, so a run that starts on
    an idle (boosting) GPU and one that starts right after heavy work measure the same thing."""
    import time

    import torch

    start = time.perf_counter()
    i = 0
    while i < 3 or (time.perf_counter() - start) * 1000 < settle_ms:
        if prepare:
            prepare(i % len(calls))
        calls[i % len(calls)]()
        i += 1
        if i % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()


def probe_ms(call: Callable[[], Any], flusher: Callable[[], None] | None = None) -> float:
    """One launch, timed alone (after a flush when one is given): sizes the sample counts."""
    import torch

    start, end = events(2)
    if flusher:
        flusher()
    start.record()
    call()
    end.record()
    torch.cuda.synchronize()
    return max(float(start.elapsed_time(end)), 1e-3)


def bench(
    make_call: Callable[[int], Callable[[], Any]],
    n_buffers: int,
    flusher: Flusher,
    target_ms: float = 100.0,
    min_reps: int = 10,
    max_reps: int = 200,
    settle_ms: float = 200.0,
    prepare: Callable[[int], None] | None = None,
) -> Timing:
    """The ``isolated`` timing of ``make_call(i)()`` (i cycles over rotated input buffers): one event pair per
    sample, the L2 flushed before each. ``prepare(i)`` runs before each launch, ahead of the flush and outside
    the timed region (an in-place kernel's inputs restored)."""
    import torch

    calls = [make_call(i) for i in range(n_buffers)]
    settle(calls, settle_ms, prepare)
    if prepare:
        prepare(0)
    one_ms = probe_ms(calls[0], flusher)
    reps = int(min(max_reps, max(min_reps, target_ms / one_ms)))
    total = reps + WARMUP_SAMPLES
    marks = events(2 * total)
    starts, ends = marks[:total], marks[total:]
    lead = _lead_cycles(one_ms)
    for i in range(total):
        if prepare:
            prepare(i % n_buffers)
        flusher()
        # Keep the GPU busy while the host enqueues the launch, so host-side launch
        # cost (Python argument handling, a loaded CPU) never lands between the events.
        torchcompat.gpu_sleep(lead)
        starts[i].record()
        calls[i % n_buffers]()
        ends[i].record()
    torch.cuda.synchronize()
    samples = [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)][WARMUP_SAMPLES:]
    return summarize(samples, "isolated", n_buffers, False, WARMUP_SAMPLES)


def _lead_cycles(kernel_ms: float) -> int:
    """About 200 us of GPU spin (at ~2 GHz), capped so long kernels are not slowed down much."""
    return int(2e9 * min(200e-6, max(50e-6, kernel_ms * 1e-3)))


def measure_copy_tbps(n_bytes: int = 2 << 30, flusher: Flusher | None = None) -> float:
    """Device-to-device copy bandwidth (read + write bytes per second, in TB/s), timed as kernels are: through
    :func:`bench`, with the L2 flushed before each sample when a flusher is given."""
    import torch

    src = torch.empty(n_bytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    if flusher is None:
        flusher = Flusher(0)
    timing = bench(
        lambda i: lambda: dst.copy_(src), 1, flusher, target_ms=50.0, min_reps=10, max_reps=20, settle_ms=20.0
    )
    src = dst = None  # type: ignore[assignment]  # free the 4 GiB before the worker goes on
    return 2 * n_bytes / (timing.median * 1e-6) / 1e12
