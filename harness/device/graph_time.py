"""A compiled function's device time split by its kernels: which of Inductor's kernels the call's GPU time goes to.

Each launch a call makes through Inductor's autotuner is bracketed by a CUDA event pair (the autotuner's ``run``
appends it through :func:`harness.support.launch_marks.bracket` while a measurement runs),
and the call as a whole by another. A spin on the GPU before each call is longer than the host takes to enqueue the
whole call (measured once, doubled), so every event and kernel waits in the queue and runs back to back: no host
launch cost, no Python wrapper time lands inside a kernel's pair. The L2 is not flushed between kernels: a kernel
reads what the one before left there, as it does in the user's call. The kernels' times need not add up to the call's:
what is left is the extern kernels (a library GEMM, attention), copies and the gaps between launches.

Events bracket the launch, not the kernel: what an event costs on the GPU lands inside its pair, which for a
kernel of a few microseconds is a visible part (docs/performance.md measures it against the call's span).
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from typing import Any, Callable

from harness.device.timing import events
from harness.model.runtime import GraphTime
from harness.support import launch_marks, torchcompat

REPS = 10
#: the spin's ceiling, in seconds of GPU time at about 2 GHz (a call whose host side takes longer is rare)
_MAX_LEAD_S = 0.05


def measure(call: Callable[[], Any], reps: int = REPS) -> GraphTime:
    """``call``'s device time by kernel: the median over ``reps`` calls of each kernel's sum and of the call's span."""
    import torch

    call()
    torch.cuda.synchronize()
    began = time.perf_counter()
    call()
    host_s = time.perf_counter() - began
    torch.cuda.synchronize()
    lead = int(2e9 * min(_MAX_LEAD_S, 2 * host_s + 100e-6))
    calls = []
    made = events(2 * reps)
    for start, end in zip(made[:reps], made[reps:]):
        launch_marks.marks.append([])
        try:
            torchcompat.gpu_sleep(lead)
            start.record()
            call()
            end.record()
        finally:
            launched = launch_marks.marks.pop()
        calls.append((start, end, launched))
    torch.cuda.synchronize()
    totals, per_kernel = [], defaultdict(list)
    for start, end, launched in calls:
        totals.append(start.elapsed_time(end) * 1000.0)
        summed: dict[str, float] = defaultdict(float)
        for name, a, b in launched:
            summed[name] += a.elapsed_time(b) * 1000.0
        for name, us in summed.items():
            per_kernel[name].append(us)
    return GraphTime(
        total_us=round(statistics.median(totals), 3),
        kernels={name: round(statistics.median(us), 3) for name, us in per_kernel.items()},
        reps=reps,
    )
