"""What the harness's interleaved rounds hold for flash attention B1 N16384 D128 and SDPA (issue 41, run BX).

Paired in the same rounds the two read 0.69x; each timed alone by the same sustained batches, 0.83-0.84x. This
times them alone and together and prints, per item, whether its batch is a CUDA graph, its launches per batch,
its note and every round's median, so the rounds show which item moves when the other is beside it; then together
with 12 and 24 batches per item per round instead of 3, to see whether the shift fades after each switch; then
with the 3 timed batches after a discarded stretch of each length in ``DISCARD_MS`` (``interleaved``'s
``discard_ms``), to find the shortest that gives each item its alone figure.
``PYTHONPATH=. python3 benchmarks/investigations/interleaved_items.py`` on the GPU host.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import torch

from harness.device import operations
from harness.device.sustained import Item, interleaved
from harness.matrix import loader
from harness.model.ids import config_id
from harness.model.jobs import BaselinesJob

DISCARD_MS = (10.0, 25.0, 50.0, 100.0)
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
        for _ in range(2):
            _describe(f"{kernel} alone", interleaved([w]))
            _describe(f"{kernel} alone", interleaved([b]))
            _describe(f"{kernel} together", interleaved([w, b]))
        for per_round in (12, 24):  # longer stretches of one item: does the shift fade after a switch?
            _describe(f"{kernel} together, {per_round} per round", interleaved([w, b], per_round=per_round))
        for discard_ms in DISCARD_MS:  # the harness's 3 timed batches, after a discarded stretch of that long
            _describe(f"{kernel} together, {discard_ms:g} ms discarded", interleaved([w, b], discard_ms=discard_ms))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
