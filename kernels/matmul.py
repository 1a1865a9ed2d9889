"""matmul: C = A @ B, fp16/bf16 inputs, fp32 accumulation, output in the input dtype.

Tiled, with grouped program ordering (GROUP_M rows of tiles share B columns in
L2) and masks on M, N and K so sizes need not be tile multiples. The default
NVIDIA space holds H100-tuned tiles whose pipelined buffers exceed MI300X's
64 KiB of LDS on purpose: finding those is the harness's point.
"""

from __future__ import annotations

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar
from harness.torchutil import element_size, randn


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_pid_n
    first_m = (pid // group_size) * GROUP_M
    rows_in_group = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % rows_in_group
    pid_n = (pid % group_size) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    mask_m = offs_m[:, None] < M
    mask_n = offs_n[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m & mask_n)


def runtime_args(shape, dtype):
    M, N, K = shape["M"], shape["N"], shape["K"]
    i32 = lambda v: Scalar("i32", v)  # noqa: E731
    return {
        "a_ptr": Pointer(dtype, M * K),
        "b_ptr": Pointer(dtype, K * N),
        "c_ptr": Pointer(dtype, M * N),
        "M": i32(M),
        "N": i32(N),
        "K": i32(K),
        "stride_am": i32(K),
        "stride_ak": i32(1),
        "stride_bk": i32(N),
        "stride_bn": i32(1),
        "stride_cm": i32(N),
        "stride_cn": i32(1),
    }


def grid(shape, config):
    return (triton.cdiv(shape["M"], config["BLOCK_M"]) * triton.cdiv(shape["N"], config["BLOCK_N"]),)


def make_inputs(shape, dtype, device, generator):
    return (
        randn((shape["M"], shape["K"]), dtype, device, generator),
        randn((shape["K"], shape["N"]), dtype, device, generator),
    )


def launch(inputs, shape, config, out=None):
    import torch

    a, b = inputs
    c = torch.empty((shape["M"], shape["N"]), device=a.device, dtype=a.dtype) if out is None else out
    matmul_kernel[grid(shape, config)](
        a,
        b,
        c,
        shape["M"],
        shape["N"],
        shape["K"],
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        **config,
    )
    return c


def reference(inputs, shape):
    a, b = inputs
    return (a.float() @ b.float()).to(a.dtype)


def torch_matmul(inputs, shape):
    """cuBLAS / hipBLASLt through torch."""
    a, b = inputs
    return a @ b


def gemm_flops(shape, dtype):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def gemm_bytes(shape, dtype):
    """A and B read once, C written once."""
    return float(shape["M"] * shape["K"] + shape["K"] * shape["N"] + shape["M"] * shape["N"]) * element_size(dtype)


def _nv(bm, bn, bk, warps, stages, group=8):
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group, "num_warps": warps, "num_stages": stages}


def _amd(bm, bn, bk, warps, stages, wpe, nonk, kpack, group=4):
    return {
        "BLOCK_M": bm,
        "BLOCK_N": bn,
        "BLOCK_K": bk,
        "GROUP_M": group,
        "num_warps": warps,
        "num_stages": stages,
        "waves_per_eu": wpe,
        "matrix_instr_nonkdim": nonk,
        "kpack": kpack,
    }


SPEC = KernelSpec(
    name="matmul",
    fn=matmul_kernel,
    dims=("M", "N", "K"),
    dtypes=("fp16", "bf16"),
    tunables=("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"),
    runtime_args=runtime_args,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    flops=gemm_flops,
    min_bytes=gemm_bytes,
    nvidia_configs=(
        _nv(128, 256, 64, 8, 3),  # H100 workhorse: ~144 KiB of pipelined tiles
        _nv(256, 128, 64, 8, 3),
        _nv(128, 128, 64, 8, 4),
        _nv(128, 256, 32, 8, 4),
        _nv(64, 256, 32, 4, 4),
        _nv(128, 64, 32, 4, 4),  # small enough for 64 KiB of LDS
        _nv(128, 256, 64, 8, 4),  # ~192 KiB: deepest pipeline that fits Hopper's 227 KiB
        _nv(16, 128, 128, 4, 4),  # decode-shaped (M=16): narrow M tile, deep K
        _nv(16, 64, 256, 4, 3),  # decode: twice the programs (128 for N=8192 on 132 SMs)
    ),
    amd_configs=(
        _amd(256, 256, 64, 8, 2, 2, 16, 1),
        _amd(128, 128, 64, 4, 2, 2, 16, 2),
        _amd(128, 256, 64, 8, 2, 0, 16, 1),
        _amd(64, 128, 64, 4, 2, 0, 32, 1),
    ),
    baselines={"torch.matmul": torch_matmul},
    interpret_dtypes=("fp16",),  # bf16 arithmetic is not interpretable (see KernelSpec)
    interpret_shapes=({"M": 67, "N": 45, "K": 100}, {"M": 16, "N": 32, "K": 16}),
    tolerances={"fp16": (2e-2, 1e-2), "bf16": (6e-2, 2e-2)},
)
