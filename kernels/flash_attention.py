"""flash_attention: forward attention, softmax(Q K^T / sqrt(d)) V, never writing S.

Q, K, V and O are (B, H, N, D) contiguous. One program owns BLOCK_M query rows of
one (batch, head) and streams K/V in BLOCK_N blocks with a running max and sum
(online softmax). Optional causal mask; N need not be a block multiple.
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar
from harness.torchutil import attention_bytes, attention_flops, attention_reference, randn, sdpa


@triton.jit
def _attend_blocks(
    acc,
    l_i,
    m_i,
    q,
    k_ptrs,
    v_ptrs,
    offs_m,
    offs_n,
    lo,
    hi,
    N,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    MASK_DIAGONAL: tl.constexpr,
    MASK_TAIL: tl.constexpr,
):
    """Online softmax over the K/V blocks [lo, hi); masks are paid only where a caller asks for them."""
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        if MASK_TAIL:
            k = tl.load(k_ptrs + start_n * HEAD_DIM, mask=cols[:, None] < N, other=0.0)
        else:
            k = tl.load(k_ptrs + start_n * HEAD_DIM)
        s = tl.dot(q, tl.trans(k))
        if MASK_DIAGONAL or MASK_TAIL:
            keep = cols[None, :] < N
            if MASK_DIAGONAL:
                keep = keep & (offs_m[:, None] >= cols[None, :])
            s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])  # one FMA per score: the scale is folded in here
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if MASK_TAIL:
            v = tl.load(v_ptrs + start_n * HEAD_DIM, mask=cols[:, None] < N, other=0.0)
        else:
            v = tl.load(v_ptrs + start_n * HEAD_DIM)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])  # accumulate in the MMA's own accumulator
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def flash_attention_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    N,
    sm_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # causal: the longest rows (the last query blocks) start first, so the tail of the grid is short work
    pid_m = tl.num_programs(0) - 1 - tl.program_id(0) if CAUSAL else tl.program_id(0)
    start_m = pid_m * BLOCK_M
    base = tl.program_id(1).to(tl.int64) * N * HEAD_DIM
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    k_ptrs = k_ptr + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    v_ptrs = v_ptr + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    qk_scale = sm_scale * 1.4426950408889634  # fold log2(e): exp2 is the native instruction
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    # K/V blocks wholly inside the sequence and (causal) wholly below the diagonal need no mask
    full_end = (N // BLOCK_N) * BLOCK_N
    if CAUSAL:
        full_end = tl.minimum(full_end, (start_m // BLOCK_N) * BLOCK_N)
    acc, l_i, m_i = _attend_blocks(
        acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, 0, full_end, N, qk_scale, HEAD_DIM, BLOCK_N, False, False
    )
    # the rest: the diagonal blocks (causal) and the partial last block, masked
    hi = tl.minimum(start_m + BLOCK_M, N) if CAUSAL else N
    acc, l_i, m_i = _attend_blocks(
        acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, full_end, hi, N, qk_scale, HEAD_DIM, BLOCK_N, CAUSAL, True
    )
    out = acc / l_i[:, None]
    tl.store(
        o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
        out.to(o_ptr.dtype.element_ty),
        mask=offs_m[:, None] < N,
    )


def runtime_args(shape, dtype):
    numel = shape["B"] * shape["H"] * shape["N"] * shape["D"]
    return {
        "q_ptr": Pointer(dtype, numel),
        "k_ptr": Pointer(dtype, numel),
        "v_ptr": Pointer(dtype, numel),
        "o_ptr": Pointer(dtype, numel),
        "N": Scalar("i32", shape["N"]),
        "sm_scale": Scalar("fp32", 1.0 / math.sqrt(shape["D"])),
    }


def fixed_constexprs(shape, dtype):
    return {"HEAD_DIM": shape["D"], "CAUSAL": bool(shape["causal"])}


def config_ok(shape, config):
    return shape["D"] in (16, 32, 64, 128, 256)


def grid(shape, config):
    return (triton.cdiv(shape["N"], config["BLOCK_M"]), shape["B"] * shape["H"])


def make_inputs(shape, dtype, device, generator):
    dims = (shape["B"], shape["H"], shape["N"], shape["D"])
    return tuple(randn(dims, dtype, device, generator) for _ in range(3))


def launch(inputs, shape, config, out=None):
    import torch

    q, k, v = inputs
    o = torch.empty_like(q) if out is None else out
    flash_attention_kernel[grid(shape, config)](
        q, k, v, o, shape["N"], 1.0 / math.sqrt(shape["D"]), HEAD_DIM=shape["D"], CAUSAL=bool(shape["causal"]), **config
    )
    return o


def _nv(bm, bn, warps, stages):
    return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": warps, "num_stages": stages}


def _amd(bm, bn, warps, wpe, nonk):
    return {
        "BLOCK_M": bm,
        "BLOCK_N": bn,
        "num_warps": warps,
        "num_stages": 1,
        "waves_per_eu": wpe,
        "matrix_instr_nonkdim": nonk,
    }


SPEC = KernelSpec(
    name="flash_attention",
    fn=flash_attention_kernel,
    dims=("B", "H", "N", "D"),
    flags=("causal",),
    dtypes=("fp16", "bf16"),
    tunables=("BLOCK_M", "BLOCK_N"),
    runtime_args=runtime_args,
    fixed_constexprs=fixed_constexprs,
    config_ok=config_ok,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=attention_reference,
    flops=attention_flops,
    min_bytes=attention_bytes,
    nvidia_configs=(
        _nv(128, 128, 8, 3),  # H100-sized K/V pipeline: over 64 KiB at head dim 128
        _nv(128, 64, 4, 3),
        _nv(128, 64, 8, 4),
        _nv(64, 64, 4, 3),
        _nv(128, 128, 8, 2),
        _nv(128, 64, 4, 4),
        _nv(256, 64, 16, 3),  # four warp groups of 64 rows: the K/V tile is shared by more rows
        _nv(256, 128, 16, 2),
        _nv(64, 128, 4, 3),
    ),
    amd_configs=(
        _amd(128, 64, 4, 2, 16),
        _amd(128, 128, 8, 2, 16),
        _amd(64, 64, 4, 0, 32),
    ),
    baselines={"sdpa": sdpa},
    interpret_dtypes=("fp16",),  # bf16 arithmetic is not interpretable (see KernelSpec)
    interpret_shapes=(
        {"B": 1, "H": 2, "N": 77, "D": 64, "causal": True},
        {"B": 2, "H": 1, "N": 45, "D": 64, "causal": False},
        # several unmasked blocks, diagonal blocks and a partial last block
        {"B": 1, "H": 1, "N": 300, "D": 32, "causal": True},
        {"B": 1, "H": 1, "N": 300, "D": 32, "causal": False},
    ),
    tolerances={"fp16": (1e-2, 1e-2), "bf16": (3e-2, 3e-2)},
)
