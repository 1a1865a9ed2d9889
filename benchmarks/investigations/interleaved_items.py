"""What the harness's interleaved rounds hold for flash attention B1 N16384 D128 and SDPA (issue 41, run BX).

Paired in the same rounds the two read 0.69x; each timed alone by the same sustained batches, 0.83-0.84x. This
times them alone and together and prints, per item, whether its batch is a CUDA graph, its launches per batch,
its note and every round's median, so the rounds show which item moves when the other is beside it; then together
with 12 and 24 batches per item per round instead of 3, to see whether the shift fades after each switch; then
with the 3 timed batches after a discarded stretch of each length in ``DISCARD_MS`` after a switch
(``interleaved``'s ``switch_ms``; 0 is one batch, the rule before run CA), to find the shortest that gives each
item its alone figure. Last, the settling curve: each
item's batches timed one by one for ``CURVE_MS`` after each switch, to see how long the shift lasts. Each phase
prints its wall-clock start, to lay the table beside an ``nvidia-smi --query-gpu=... -lms 20`` trace of clocks
and power taken at the same time.
``PYTHONPATH=. python3 benchmarks/investigations/interleaved_items.py`` on the GPU host.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import datetime
from typing import Any, Callable

import torch

from harness.device import operations
from harness.device.sustained import Item, _capture, _launches, interleaved
from harness.device.timing import probe_ms, settle
from harness.intake import loader
from harness.model.ids import config_id
from harness.model.jobs import BaselinesJob

DISCARD_MS = (0.0, 10.0, 25.0, 50.0, 100.0, 200.0)
CURVE_MS = 400.0  # how long each item runs, batch by batch timed, after a switch
CASES = (
    ("flash_attention", "fp16", {"B": 1, "H": 16, "N": 16384, "D": 128, "causal": False}, "M256_N64_s3_w16"),
    ("moe_gemm", "fp8", {"T": 16384, "E": 8, "N": 14336, "K": 4096, "bias": False}, "K64_M128_N256_s3_w8"),
)


def _describe(label: str, found: dict[str, Any]) -> None:
    for name, m in found.items():
        if isinstance(m, str):
            print(f"| {label} | {name} | error {m} | | | |")
            continue
        rounds = ", ".join(f"{x:.0f}" for x in m.round_medians_us)
        print(f"| {label} | {name} | {m.median_us:.1f} | graph={m.graph} launches={m.launches_per_sample} | "
              f"{rounds} | {m.note[:80]} |")  # fmt: skip


def _mark(what: str) -> None:
    print(f"<!-- {datetime.now().strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]} {what} -->", flush=True)


def _curve(label: str, items: list[Item], switches: int = 4) -> None:
    """Each item's batch durations, one by one, for ``CURVE_MS`` after each switch (heated first by the other):
    where the shift after a switch fades, and how fast. Prints per stretch the first batches, then the medians of
    each successive 50 ms."""
    import torch

    batches = []
    for item in items:
        calls = [item.make_call(i) for i in range(item.n_buffers)]
        settle(calls, 10.0)
        one = probe_ms(calls[0])
        batches.append((item.name, _capture(calls, _launches(one, item.n_buffers), one), one))
    spans = [max(1, round(CURVE_MS / max(b.launches * one, 1e-3))) for _, b, one in batches]
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(n + 1)] for n in spans]
    _mark(f"{label} curve")
    for k in range(switches + 1):  # the first stretch only heats: it is the state the first switch leaves
        j = k % len(batches)
        name, batch, _ = batches[j]
        if k == 0:
            for _ in range(spans[j]):
                batch.run()
            continue
        marks = ev[j]
        marks[0].record()
        for i in range(spans[j]):
            batch.run()
            marks[i + 1].record()
        torch.cuda.synchronize()
        us = [marks[i].elapsed_time(marks[i + 1]) * 1000.0 / batch.launches for i in range(spans[j])]
        t, buckets, acc = 0.0, [], []
        for x in us:
            acc.append(x)
            t += x * batch.launches / 1000.0
            if t >= 50.0 * (len(buckets) + 1):
                buckets.append(statistics.median(acc))
                acc = []
        first = ", ".join(f"{x:.0f}" for x in us[:6])
        steps = ", ".join(f"{x:.0f}" for x in buckets)
        print(f"| {label} curve, switch {k} | {name} | first batches {first} | per 50 ms {steps} |", flush=True)


def main() -> int:
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| how | item | median µs | batch | round medians µs | note |")
    print("|---|---|---|---|---|---|")
    for kernel, dtype, shape, wanted in CASES:
        state = operations._case(BaselinesJob(ref=loader.resolve(kernel, None), dtype=dtype, shape=shape, seed=0))
        spec, rotated = state.spec, operations._rotated(state)
        configs = [*spec.nvidia_configs]
        config = next(dict(c) for c in configs if config_id(dict(sorted(c.items()))) == wanted)
        name, fn = next(iter(spec.baselines.items()))

        def winner(i: int, c: dict[str, Any] = config) -> Callable[[], Any]:
            return lambda: spec.run(rotated[i], shape, c)

        def baseline(i: int) -> Callable[[], Any]:
            return lambda: fn(rotated[i], shape)

        w, b = Item("winner", winner, len(rotated)), Item(name, baseline, len(rotated))
        _mark(f"{kernel} alone and together")
        for _ in range(2):
            _describe(f"{kernel} alone", interleaved([w]))
            _describe(f"{kernel} alone", interleaved([b]))
            _describe(f"{kernel} together", interleaved([w, b]))
        for per_round in (12, 24):  # longer stretches of one item: does the shift fade after a switch?
            _describe(
                f"{kernel} together, {per_round} per round", interleaved([w, b], per_round=per_round, switch_ms=0.0)
            )
        _mark(f"{kernel} discard sweep")
        for discard_ms in DISCARD_MS:  # the harness's 3 timed batches, after a discarded stretch of that long
            _describe(f"{kernel} together, {discard_ms:g} ms discarded", interleaved([w, b], switch_ms=discard_ms))
        _curve(kernel, [w, b])
        sys.stdout.flush()
    _mark(f"done after {time.perf_counter():.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
