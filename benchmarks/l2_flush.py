"""How the L2 flush before each sample biases a timing (H200: run it on the device, quote in docs/performance.md).

For a bf16 add of 16, 128 and 512 MB operands, the median of flushed samples after three flushes:
``zero_()`` (the harness's old flush: the L2 is left full of dirty lines), a read of the same buffer (the
harness's flush now), and zero-then-read; against a reference with no flush at all where the L2 is cold by
construction: each sample reads operands no earlier sample touched (a ring of copies that exceeds the L2 many
times over). Prints one line per size and method: median µs and the difference from the reference.
"""

from __future__ import annotations

import statistics
import sys

import torch


def timed(fn, before, reps: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for i in range(reps):
        before(i)
        torch.cuda._sleep(400_000)
        start.record()
        fn(i)
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) * 1000)
    return statistics.median(samples)


def main() -> None:
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    buf = torch.ones(2 * max(l2, 32 << 20) // 4, dtype=torch.int32, device="cuda")
    sink = torch.zeros((), dtype=torch.int64, device="cuda")
    flushes = {
        "zero_()": lambda i: buf.zero_(),
        "read": lambda i: torch.sum(buf, dim=0, out=sink),
        "zero+read": lambda i: (buf.zero_(), torch.sum(buf, dim=0, out=sink)),
    }
    print(f"device {torch.cuda.get_device_name(0)}, L2 {l2 >> 20} MB, torch {torch.__version__}")
    for mb in (16, 128, 512):
        n = (mb << 20) // 2 // 2  # two bf16 operands of mb/2 each: mb MB read per add
        ring = max(3, (8 * l2) // (mb << 20) + 2)  # copies enough that no sample finds its operands in L2
        xs = [torch.randn(n, device="cuda", dtype=torch.bfloat16) for _ in range(ring)]
        ys = [torch.randn(n, device="cuda", dtype=torch.bfloat16) for _ in range(ring)]
        out = torch.empty_like(xs[0])
        for i in range(10):
            torch.add(xs[i % ring], ys[i % ring], out=out)
        torch.cuda.synchronize()
        reps = 60
        reference = timed(lambda i: torch.add(xs[i % ring], ys[i % ring], out=out), lambda i: None, reps)
        print(f"{mb:4d} MB  cold-by-rotation reference {reference:8.1f} us")
        for name, flush in flushes.items():
            value = timed(lambda i: torch.add(xs[0], ys[0], out=out), flush, reps)
            print(f"{mb:4d} MB  {name:10s} {value:8.1f} us  ({value - reference:+6.1f} us vs reference)")
        xs = ys = out = None  # free before the next size
        torch.cuda.empty_cache()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
