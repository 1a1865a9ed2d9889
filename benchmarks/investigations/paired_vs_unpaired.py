"""Is the speed-up gap between the sustained method and ``do_bench_cudagraph`` (issue 41, run BT) a difference of
method, or the drift of an unpaired ratio?

The harness's sustained speed-up is paired: winner and baseline are timed in the same interleaved rounds
(:func:`harness.device.sustained.interleaved`), so both see the same clocks. ``do_bench_cudagraph``'s speed-up is the
ratio of two figures taken one after the other. For run BT's three outliers this times both, six times over on the
same inputs, and prints each repetition's two ratios: if the unpaired ratio moves between repetitions by as much as
the gap, the gap is its drift. ``PYTHONPATH=. python3 benchmarks/investigations/paired_vs_unpaired.py`` on the GPU host.
"""

from __future__ import annotations

import statistics
import sys
from typing import Any, Callable

import torch
import triton
import triton.testing

from harness.device import operations
from harness.device.sustained import Item, interleaved
from harness.intake import loader
from harness.model.ids import config_id
from harness.model.jobs import BaselinesJob

CASES = (
    ("matmul", "bf16", {"M": 8192, "N": 8192, "K": 8192}, "K64_M128_N256_GROUP_M8_s4_w8"),
    ("matmul_tma", "bf16", {"M": 4096, "N": 14336, "K": 4096}, "K64_M128_N256_EPI_SPLIT2_GROUP_M8_s4_w8"),
    ("moe_gemm", "fp8", {"T": 16384, "E": 8, "N": 14336, "K": 4096, "bias": False}, "K64_M128_N256_s3_w8"),
)
REPEATS = 6


def main() -> int:
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    print("| case | rep | winner µs (graph) | baseline µs (graph) | speed-up, graph | speed-up, sustained paired |")
    print("|---|---|---|---|---|---|")
    for kernel, dtype, shape, wanted in CASES:
        ref = loader.resolve(kernel, None)
        state = operations._case(BaselinesJob(ref=ref, dtype=dtype, shape=shape, seed=0))
        spec, rotated = state.spec, operations._rotated(state)
        config = next((dict(c) for c in spec.nvidia_configs if config_id(dict(sorted(c.items()))) == wanted), None)
        if config is None:
            print(f"| {kernel} | - | no config {wanted} | | | |")
            continue
        name, fn = next(iter(spec.baselines.items()))

        def winner(i: int, c: dict[str, Any] = config) -> Callable[[], Any]:
            return lambda: spec.run(rotated[i], shape, c)

        def baseline(i: int) -> Callable[[], Any]:
            return lambda: fn(rotated[i], shape)

        graph_ratios, paired_ratios = [], []
        for rep in range(REPEATS):
            w = 1000.0 * triton.testing.do_bench_cudagraph(winner(0), return_mode="median")
            b = 1000.0 * triton.testing.do_bench_cudagraph(baseline(0), return_mode="median")
            timed = interleaved([Item("w", winner, len(rotated)), Item("b", baseline, len(rotated))])
            paired = timed["b"].median_us / timed["w"].median_us  # type: ignore[union-attr]
            graph_ratios.append(b / w)
            paired_ratios.append(paired)
            label = f"{kernel} {dtype} {'x'.join(f'{k}{v}' for k, v in shape.items())} vs {name}"
            print(f"| {label} | {rep + 1} | {w:.1f} | {b:.1f} | {b / w:.3f}x | {paired:.3f}x |")
            sys.stdout.flush()
        for what, ratios in (("graph", graph_ratios), ("sustained paired", paired_ratios)):
            spread = 100 * (max(ratios) / min(ratios) - 1)
            print(f"| {kernel} | {what} | median {statistics.median(ratios):.3f}x | min {min(ratios):.3f}x | "
                  f"max {max(ratios):.3f}x | spread {spread:.1f}% |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
