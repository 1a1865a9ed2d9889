"""matmul_tma: C = A @ B as a persistent kernel whose tiles move through tensor descriptors.

The Hopper way to write a GEMM in Triton, beside ``matmul``'s classic tiled one: a grid of one
program per SM (``NUM_PROGS``) walks the output tiles in grouped order, so one tile's epilogue
overlaps the next tile's first loads and nothing is re-launched; A, B and C are host
``TensorDescriptor`` objects, so on sm_90 every ``desc.load`` / ``desc.store`` is one TMA copy
(no address arithmetic, no masks: TMA clips the edges). ``EPI_SPLIT`` stores the C tile in that many
column slices, which shrinks the epilogue's shared-memory buffer so a deeper K pipeline fits.
On AMD the same descriptors lower to ordinary buffer loads: one source for both vendors.

Same inputs, reference, FLOP and byte models as ``matmul``, so the two are compared case by case.
"""

from __future__ import annotations

import triton
import triton.language as tl
from matmul import gemm_bytes, gemm_flops, make_inputs, reference, torch_matmul  # the sibling kernel: same models

from harness.spec import KernelSpec, Scalar, TensorDesc


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped order: GROUP_M rows of tiles share their B columns while they are in L2."""
    group = GROUP_M * num_pid_n
    first_m = (tile_id // group) * GROUP_M
    rows = min(num_pid_m - first_m, GROUP_M)
    return first_m + (tile_id % group) % rows, (tile_id % group) // rows


@triton.jit
def matmul_tma_kernel(
    a_desc,
    b_desc,
    c_desc,
    M,
    N,
    K,
    NUM_PROGS,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    EPI_SPLIT: tl.constexpr,
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_PROGS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([off_m, ki * BLOCK_K])
            b = b_desc.load([ki * BLOCK_K, off_n])
            acc = tl.dot(a, b, acc)
        if EPI_SPLIT == 2:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            c_desc.store([off_m, off_n], left.to(c_desc.dtype))
            c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(c_desc.dtype))
        else:
            c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def _programs(shape, config, sm_count: int) -> int:
    tiles = triton.cdiv(shape["M"], config["BLOCK_M"]) * triton.cdiv(shape["N"], config["BLOCK_N"])
    return max(1, min(sm_count, tiles))


def runtime_args(shape, dtype, target=None, config=None):
    M, N, K = shape["M"], shape["N"], shape["K"]
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    sm_count = target.sm_count if target is not None else 132
    return {
        "a_desc": TensorDesc(dtype, (M, K), (bm, bk)),
        "b_desc": TensorDesc(dtype, (K, N), (bk, bn)),
        "c_desc": TensorDesc(dtype, (M, N), (bm, bn // config.get("EPI_SPLIT", 1))),
        "M": Scalar("i32", M),
        "N": Scalar("i32", N),
        "K": Scalar("i32", K),
        "NUM_PROGS": Scalar("i32", _programs(shape, config, sm_count)),
    }


def config_ok(shape, config):
    # TMA needs 16-byte aligned row strides: K and N multiples of 8 halves.
    return shape["K"] % 8 == 0 and shape["N"] % 8 == 0


def grid(shape, config, sm_count: int = 132):
    return (_programs(shape, config, sm_count),)


def launch(inputs, shape, config, out=None):
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    a, b = inputs
    M, N, K = shape["M"], shape["N"], shape["K"]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype) if out is None else out
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    sm_count = torch.cuda.get_device_properties(a.device).multi_processor_count if a.is_cuda else 4
    programs = grid(shape, config, sm_count)
    a_desc = TensorDescriptor(a, [M, K], [a.stride(0), 1], [bm, bk])
    b_desc = TensorDescriptor(b, [K, N], [b.stride(0), 1], [bk, bn])
    c_desc = TensorDescriptor(c, [M, N], [c.stride(0), 1], [bm, bn // config.get("EPI_SPLIT", 1)])
    matmul_tma_kernel[programs](a_desc, b_desc, c_desc, M, N, K, programs[0], **config)
    return c


def _nv(bm, bn, bk, warps, stages, split=1, group=8):
    return {
        "BLOCK_M": bm,
        "BLOCK_N": bn,
        "BLOCK_K": bk,
        "GROUP_M": group,
        "EPI_SPLIT": split,
        "num_warps": warps,
        "num_stages": stages,
    }


def _amd(bm, bn, bk, warps, stages, wpe, nonk, group=4):
    return {
        "BLOCK_M": bm,
        "BLOCK_N": bn,
        "BLOCK_K": bk,
        "GROUP_M": group,
        "EPI_SPLIT": 1,
        "num_warps": warps,
        "num_stages": stages,
        "waves_per_eu": wpe,
        "matrix_instr_nonkdim": nonk,
    }


SPEC = KernelSpec(
    name="matmul_tma",
    fn=matmul_tma_kernel,
    dims=("M", "N", "K"),
    dtypes=("fp16", "bf16"),
    tunables=("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "EPI_SPLIT"),
    runtime_args=runtime_args,
    config_ok=config_ok,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    flops=gemm_flops,
    min_bytes=gemm_bytes,
    nvidia_configs=(
        _nv(128, 256, 64, 8, 3),  # 208 KiB: three K stages plus a whole-tile epilogue buffer
        _nv(128, 256, 64, 8, 4, split=2),  # four stages fit once the epilogue stores in two halves
        _nv(128, 256, 64, 8, 4, split=2, group=16),
        _nv(256, 128, 64, 8, 4, split=2),
        _nv(256, 128, 64, 8, 3),
        _nv(128, 128, 64, 8, 4),
        _nv(128, 128, 64, 4, 4),
        _nv(128, 128, 128, 8, 3),
        _nv(64, 128, 128, 4, 4),  # more tiles than SMs for short-K and decode shapes
        _nv(64, 64, 256, 4, 3),
        # decode (M=16): a 16-row tile on mma.sync, 128 N-tiles for the SMs, the whole K in few deep steps; on the
        # H100 1.01-1.02x torch.matmul where the 64-row tiles above read 0.95-0.96x (docs/performance.md, run CH)
        _nv(16, 64, 256, 4, 3),
    ),
    amd_configs=(
        _amd(256, 256, 64, 8, 2, 0, 16),
        _amd(128, 128, 64, 4, 2, 0, 16),
        _amd(128, 256, 64, 8, 2, 0, 16),
        _amd(64, 128, 64, 4, 2, 0, 32),
    ),
    baselines={"torch.matmul": torch_matmul},
    interpret_dtypes=("fp16",),  # bf16 arithmetic is not interpretable (see KernelSpec)
    interpret_shapes=({"M": 64, "N": 48, "K": 96}, {"M": 16, "N": 32, "K": 16}),
    tolerances={"fp16": (2e-2, 1e-2), "bf16": (6e-2, 2e-2)},
)
