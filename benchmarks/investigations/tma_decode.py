"""The persistent TMA GEMM at decode (M=16) against cuBLAS: which tile shapes close the gap (issue 41, item 4).

Run CB: the TMA GEMM's best listed config (M64 N128 K128) reads 0.805x torch.matmul at M16 N8192 K8192 bf16 and
0.973x at fp16, where the classic GEMM's M16 N64 K256 reaches 0.99-1.17x. At M=16 a 64x128 tile leaves 64 tiles
for 132 SMs and computes four times the rows it stores. This times candidate tiles (BLOCK_M 16 and 32 run on
mma.sync, 64 on wgmma), each checked against torch.matmul first, with the classic GEMM's winner and torch.matmul
all in the same interleaved rounds as a run times its finalists.
``PYTHONPATH=. python3 benchmarks/investigations/tma_decode.py`` on the GPU host.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import torch

from harness.device import operations
from harness.device.sustained import Item, interleaved
from harness.intake import loader
from harness.model.jobs import BaselinesJob

SHAPE = {"M": 16, "N": 8192, "K": 8192}
LISTED = (64, 128, 128, 4, 4)  # run CB's winner in both dtypes


def _tma(bm: int, bn: int, bk: int, warps: int, stages: int) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "EPI_SPLIT": 1, "num_warps": warps,
            "num_stages": stages}  # fmt: skip


CANDIDATES = (
    LISTED,
    (64, 64, 256, 4, 3),
    (16, 64, 256, 4, 3),
    (16, 64, 256, 4, 4),
    (16, 64, 128, 4, 6),
    (16, 128, 256, 4, 3),
    (32, 64, 256, 4, 4),
    (16, 32, 256, 4, 4),
)
CLASSIC = {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 256, "GROUP_M": 8, "num_warps": 4, "num_stages": 3}


def main() -> int:
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| dtype | item | median µs | vs torch.matmul | round medians µs |\n|---|---|---|---|---|")
    for dtype in ("bf16", "fp16"):
        tma = operations._case(BaselinesJob(ref=loader.resolve("matmul_tma", None), dtype=dtype, shape=SHAPE, seed=0))
        spec, rotated = tma.spec, operations._rotated(tma)
        classic = loader.resolve("matmul", None)
        classic_spec = operations._case(BaselinesJob(ref=classic, dtype=dtype, shape=SHAPE, seed=0)).spec
        want = torch.matmul(*rotated[0])
        items: list[Item] = []
        for cand in CANDIDATES:
            config = _tma(*cand)
            try:
                got = spec.run(rotated[0], SHAPE, config)
                torch.testing.assert_close(got, want, rtol=6e-2, atol=2e-2)
            except Exception as exc:  # noqa: BLE001 - a tile that does not build or is wrong is this row
                print(f"| {dtype} | tma {cand} | {type(exc).__name__}: {str(exc).splitlines()[0][:120]} | | |")
                continue

            def call(i: int, c: dict[str, Any] = config) -> Callable[[], Any]:
                return lambda: spec.run(rotated[i], SHAPE, c)

            items.append(Item(f"tma M{cand[0]} N{cand[1]} K{cand[2]} w{cand[3]} s{cand[4]}", call, len(rotated)))
        items.append(
            Item(
                "classic M16 N64 K256 w4 s3",
                lambda i: lambda: classic_spec.run(rotated[i], SHAPE, CLASSIC),
                len(rotated),
            )
        )
        items.append(Item("torch.matmul", lambda i: lambda: torch.matmul(*rotated[i]), len(rotated)))
        timed = interleaved(items)
        ref = timed["torch.matmul"]
        for name, m in timed.items():
            if isinstance(m, str):
                print(f"| {dtype} | {name} | error {m[:120]} | | |")
                continue
            ratio = ref.median_us / m.median_us if not isinstance(ref, str) else float("nan")
            rounds = ", ".join(f"{x:.1f}" for x in m.round_medians_us)
            print(f"| {dtype} | {name} | {m.median_us:.1f} | {ratio:.3f}x | {rounds} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
