"""moe_gemm: the grouped GEMM of a mixture-of-experts layer, in fp16 or fp8 with per-tensor scales.

Tokens arrive sorted by the expert they were routed to (``expert_offsets[e]`` is expert
e's first row), each expert holds at most ``capacity = ceil(1.25 · T / E)`` tokens (a
capacity factor, as MoE layers use to bound their work), and expert e multiplies its
rows by its own weight ``W[e]``, stored N × K (K contiguous, as ``nn.Linear`` keeps it: the
layout fp8 MMA wants for its second operand). One program owns a BLOCK_M × BLOCK_N tile of one
expert; programs past an expert's last row return at once. fp8 inputs are dequantized
by ``a_scale · w_scale`` in the epilogue (fp32 accumulation, bf16 output); the bias is
optional (``bias`` in the shape; ``None`` otherwise).

What it exercises in the harness: a vendor-specific type — ``fp8`` is ``fp8e4nv`` on NVIDIA
and MI355X but ``fp8e4b8`` on MI300X, so ``runtime_args`` takes ``target`` — and an optional
pointer argument. The interpreter checks the fp16 path (it has no fp8 matrix multiply);
the GPU checks fp8.
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar, fp8_for
from harness.torchutil import device_arch, torch_dtype

CAPACITY_FACTOR = 1.25


@triton.jit
def moe_gemm_kernel(
    a_ptr,
    w_ptr,
    c_ptr,
    bias_ptr,
    expert_offsets_ptr,
    a_scale,
    w_scale,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    expert = tl.program_id(2)
    first = tl.load(expert_offsets_ptr + expert)
    end = tl.load(expert_offsets_ptr + expert + 1)
    row0 = first + tl.program_id(0) * BLOCK_M
    if row0 < end:
        rows = row0 + tl.arange(0, BLOCK_M)
        cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + rows.to(tl.int64)[:, None] * K + ks[None, :]
        w_ptrs = w_ptr + expert.to(tl.int64) * N * K + cols[None, :] * K + ks[:, None]
        acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptrs, mask=(rows[:, None] < end) & (ks[None, :] < K - k), other=0.0)
            w = tl.load(w_ptrs, mask=(ks[:, None] < K - k) & (cols[None, :] < N), other=0.0)
            acc = tl.dot(a, w, acc)
            a_ptrs += BLOCK_K
            w_ptrs += BLOCK_K
        acc = acc * (a_scale * w_scale)
        if bias_ptr is not None:
            acc += tl.load(bias_ptr + expert * N + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
        c_ptrs = c_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < end) & (cols[None, :] < N))


def capacity(shape) -> int:
    return math.ceil(CAPACITY_FACTOR * shape["T"] / shape["E"])


def _types(dtype, arch):
    """(input element type, output type) in Triton's names."""
    return (fp8_for(arch), "bf16") if dtype == "fp8" else (dtype, dtype)


def runtime_args(shape, dtype, target=None):
    arch = target.arch if target is not None else "sm_90"
    elem, out = _types(dtype, arch)
    t, e, n, k = shape["T"], shape["E"], shape["N"], shape["K"]
    return {
        "a_ptr": Pointer(elem, t * k),
        "w_ptr": Pointer(elem, e * k * n),
        "c_ptr": Pointer(out, t * n),
        "bias_ptr": Pointer(out, e * n) if shape["bias"] else None,
        "expert_offsets_ptr": Pointer("i32", e + 1),
        "a_scale": Scalar("fp32", 0.5),
        "w_scale": Scalar("fp32", 0.5),
        "N": Scalar("i32", n),
        "K": Scalar("i32", k),
    }


def grid(shape, config):
    return (triton.cdiv(capacity(shape), config["BLOCK_M"]), triton.cdiv(shape["N"], config["BLOCK_N"]), shape["E"])


def _quantize(x, dtype):
    """Per-tensor scaled cast to ``dtype`` (fp8: amax mapped to the format's largest value); returns (q, scale)."""
    import torch

    if not dtype.is_floating_point or dtype.itemsize > 1:
        return x.to(dtype), 1.0
    scale = float(x.abs().max()) / torch.finfo(dtype).max
    return (x / scale).to(dtype), scale


def make_inputs(shape, dtype, device, generator):
    import torch

    t, e, n, k = shape["T"], shape["E"], shape["N"], shape["K"]
    gdev = generator.device
    # route each token to one expert, at most `capacity` per expert (overflow goes to the least loaded)
    counts = torch.zeros(e, dtype=torch.int64)
    choice = torch.randint(0, e, (t,), generator=torch.Generator().manual_seed(int(generator.initial_seed())))
    for c in choice.tolist():
        if counts[c] >= capacity(shape):
            c = int(torch.argmin(counts))
        counts[c] += 1
    offsets = torch.zeros(e + 1, dtype=torch.int32)
    offsets[1:] = torch.cumsum(counts, 0).to(torch.int32)
    elem, out = _types(dtype, device_arch(device))
    a, a_scale = _quantize(torch.randn(t, k, generator=generator, device=gdev).to(device), torch_dtype(elem))
    w, w_scale = _quantize(
        torch.randn(e, n, k, generator=generator, device=gdev).to(device) / math.sqrt(k), torch_dtype(elem)
    )
    bias = torch.randn(e, n, generator=generator, device=gdev).to(device, torch_dtype(out)) if shape["bias"] else None
    # the expert bounds also as host integers: the reference and the baseline slice by them without reading the
    # device tensor back (a .tolist() inside a timed baseline would synchronise and time the host's launches)
    bounds = tuple(int(x) for x in offsets.tolist())
    return (a, w, bias, offsets.to(device), a_scale, w_scale, bounds)


def launch(inputs, shape, config, out=None):
    import torch

    a, w, bias, offsets, a_scale, w_scale, _ = inputs
    out_dtype = torch.bfloat16 if a.element_size() == 1 else a.dtype
    c = torch.empty(shape["T"], shape["N"], device=a.device, dtype=out_dtype) if out is None else out
    moe_gemm_kernel[grid(shape, config)](a, w, c, bias, offsets, a_scale, w_scale, shape["N"], shape["K"], **config)
    return c


def reference(inputs, shape):
    """Per expert, the dequantized rows times the dequantized weight, in fp32."""
    import torch

    a, w, bias, _, a_scale, w_scale, bounds = inputs
    out_dtype = torch.bfloat16 if a.element_size() == 1 else a.dtype
    c = torch.empty(shape["T"], shape["N"], device=a.device, dtype=out_dtype)
    for e in range(shape["E"]):
        lo, hi = bounds[e], bounds[e + 1]
        part = (a[lo:hi].float() * a_scale) @ (w[e].float() * w_scale).T
        if bias is not None:
            part += bias[e].float()
        c[lo:hi] = part.to(out_dtype)
    return c


def min_bytes(shape, dtype):
    """Tokens and every expert's weight read once, the output (fp16 / bf16) written once."""
    width = 1 if dtype == "fp8" else 2
    return float(width * (shape["T"] * shape["K"] + shape["E"] * shape["K"] * shape["N"]) + 2 * shape["T"] * shape["N"])


def torch_grouped(inputs, shape):
    """The loop a framework without a grouped kernel runs: one torch.matmul per expert, in the input dtype
    (fp8: dequantized to bf16 first, as eager code without scaled-mm support does)."""
    import torch

    a, w, bias, _, a_scale, w_scale, bounds = inputs
    fp8 = a.element_size() == 1
    dt = torch.bfloat16 if fp8 else a.dtype
    c = torch.empty(shape["T"], shape["N"], device=a.device, dtype=dt)
    for e in range(shape["E"]):
        lo, hi = bounds[e], bounds[e + 1]
        x, y = (a[lo:hi].to(dt) * a_scale, (w[e].to(dt) * w_scale).T) if fp8 else (a[lo:hi], w[e].T)
        c[lo:hi] = x @ y if bias is None else torch.addmm(bias[e], x, y)
    return c


SPEC = KernelSpec(
    name="moe_gemm",
    fn=moe_gemm_kernel,
    dims=("T", "E", "N", "K"),
    flags=("bias",),
    dtypes=("fp16", "fp8"),
    tunables=("BLOCK_M", "BLOCK_N", "BLOCK_K"),
    runtime_args=runtime_args,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    flops=lambda shape, dtype: 2.0 * shape["T"] * shape["N"] * shape["K"],
    min_bytes=min_bytes,
    nvidia_configs=(
        {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4},
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3},
        {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3},
    ),
    amd_configs=(
        {
            "BLOCK_M": 64,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
            "num_warps": 4,
            "num_stages": 2,
            "waves_per_eu": 0,
            "matrix_instr_nonkdim": 16,
        },
        {
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
            "num_warps": 8,
            "num_stages": 2,
            "waves_per_eu": 0,
            "matrix_instr_nonkdim": 16,
        },
    ),
    baselines={"torch.matmul per expert": torch_grouped},
    interpret_shapes=({"T": 40, "E": 4, "N": 48, "K": 80, "bias": True}, {"T": 33, "E": 3, "N": 32, "K": 64}),
    interpret_dtypes=("fp16",),
    # fp8: Hopper's fp8 MMA accumulates with reduced precision (Triton's max_num_imprecise_acc default); on the
    # H200 with K = 14336, 3 of 67M outputs (bf16, |value| ~ 1-4) were 0.078 from the fp32 reference
    tolerances={"fp16": (2e-2, 1e-2), "fp8": (1e-1, 5e-2)},
)
