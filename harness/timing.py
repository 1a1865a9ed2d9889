"""Timing kernels on a GPU: warm-up, L2 flushed before every sample, raw samples kept.

Statistics are plain Python over the raw samples (median and 20/80 quantiles),
so a later comparison can use the samples themselves. Works on CUDA and ROCm
torch alike (``torch.cuda`` is HIP on ROCm).
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any, Callable


@dataclass
class Timing:
    samples_us: list[float]
    median_us: float
    p20_us: float
    p80_us: float
    reps: int
    rotated_buffers: int
    graph: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values."""
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(samples: list[float], rotated: int = 1, graph: bool = False) -> Timing:
    ordered = sorted(samples)
    return Timing(samples_us=[round(s, 3) for s in samples], median_us=statistics.median(ordered),
                  p20_us=quantile(ordered, 0.2), p80_us=quantile(ordered, 0.8), reps=len(samples),
                  rotated_buffers=rotated, graph=graph)


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


def bench(make_call: Callable[[int], Callable[[], Any]], n_buffers: int, flusher: Flusher,
          target_ms: float = 100.0, min_reps: int = 10, max_reps: int = 200, settle_ms: float = 200.0,
          graph: bool = False, prepare: Callable[[int], None] | None = None) -> Timing:
    """Time ``make_call(i)()`` (i cycles over rotated input buffers); one CUDA event pair per sample.

    Before sampling, the kernel runs back to back for ``settle_ms``: the clocks then sit
    at their sustained level, so a run that starts on an idle (boosting) GPU and one that
    starts right after heavy work measure the same thing. ``prepare(i)`` runs before each
    launch, ahead of the flush and outside the timed region (an in-place kernel's inputs
    restored).
    """
    import time

    import torch

    calls = [make_call(i) for i in range(n_buffers)]
    start = time.perf_counter()
    i = 0
    while i < 3 or (time.perf_counter() - start) * 1000 < settle_ms:
        if prepare:
            prepare(i % n_buffers)
        calls[i % n_buffers]()
        i += 1
        if i % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    if graph:
        calls = [_graphed(c) for c in calls]
    probe_start, probe_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if prepare:
        prepare(0)
    flusher()
    probe_start.record()
    calls[0]()
    probe_end.record()
    torch.cuda.synchronize()
    one_ms = max(probe_start.elapsed_time(probe_end), 1e-3)
    reps = int(min(max_reps, max(min_reps, target_ms / one_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    lead = _lead_cycles(one_ms)
    for i in range(reps):
        if prepare:
            prepare(i % n_buffers)
        flusher()
        # Keep the GPU busy while the host enqueues the launch, so host-side launch
        # cost (Python argument handling, a loaded CPU) never lands between the events.
        torch.cuda._sleep(lead)
        starts[i].record()
        calls[i % n_buffers]()
        ends[i].record()
    torch.cuda.synchronize()
    samples = [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]
    return summarize(samples, n_buffers, graph)


def _lead_cycles(kernel_ms: float) -> int:
    """About 200 us of GPU spin (at ~2 GHz), capped so long kernels are not slowed down much."""
    return int(2e9 * min(200e-6, max(50e-6, kernel_ms * 1e-3)))


def _graphed(call: Callable[[], Any]) -> Callable[[], Any]:
    import torch

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        call()
    return g.replay


def measure_copy_tbps(n_bytes: int = 2 << 30, flusher: Flusher | None = None) -> float:
    """Device-to-device copy bandwidth (read + write bytes per second, in TB/s), timed as kernels are: through
    :func:`bench`, with the L2 flushed before each sample when a flusher is given."""
    import torch

    src = torch.empty(n_bytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    if flusher is None:
        flusher = Flusher(0)
    timing = bench(lambda i: (lambda: dst.copy_(src)), 1, flusher, target_ms=50.0, min_reps=10, max_reps=20,
                   settle_ms=20.0)
    src = dst = None  # free the 4 GiB before the worker goes on
    return 2 * n_bytes / (timing.median_us * 1e-6) / 1e12
