"""attention_desc: attention forward whose tiles move through host tensor descriptors on NVIDIA.

The same online-softmax forward as ``flash_attention``, written the way Hopper kernels now
are: Q, K, V and the output are passed as ``TensorDescriptor`` objects over the (B·H·N, D) view, so
each ``desc.load`` is one TMA copy into shared memory (no address arithmetic, no masks).
MI300X has no TMA: on AMD targets the same function takes plain pointers (``USE_DESC``
is a constexpr the target decides), which is how a team keeps one kernel for both vendors.

What it exercises in the harness: an argument kind that depends on the target
(``TensorDesc`` on sm_90 and later, ``Pointer`` elsewhere) and a descriptor block shape
that depends on the config (``runtime_args`` takes ``target`` and ``config``).
N must be a multiple of both tiles (``config_ok``): a descriptor tile never straddles two heads.
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar, TensorDesc
from harness.torchutil import attention_bytes, attention_flops, attention_reference, device_arch, randn, sdpa


@triton.jit
def _tile(ref, row, offs_r, offs_d, HEAD_DIM: tl.constexpr, USE_DESC: tl.constexpr):
    if USE_DESC:
        tile = ref.load([row, 0])
    else:
        tile = tl.load(ref + (row + offs_r).to(tl.int64)[:, None] * HEAD_DIM + offs_d[None, :])
    return tile


@triton.jit
def attention_desc_kernel(
    Q,
    K,
    V,
    Out,
    N,
    sm_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    USE_DESC: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.num_programs(0) - 1 - tl.program_id(0) if CAUSAL else tl.program_id(0)
    start_m = pid_m * BLOCK_M
    row0 = tl.program_id(1) * N  # this (batch, head)'s first row in the (B*H*N, D) view
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = _tile(Q, row0 + start_m, tl.arange(0, BLOCK_M), offs_d, HEAD_DIM, USE_DESC)
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    hi = start_m + BLOCK_M if CAUSAL else N
    for start_n in range(0, hi, BLOCK_N):
        k = _tile(K, row0 + start_n, offs_n, offs_d, HEAD_DIM, USE_DESC)
        s = tl.dot(q, tl.trans(k))
        if CAUSAL:
            s = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = _tile(V, row0 + start_n, offs_n, offs_d, HEAD_DIM, USE_DESC)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    out = (acc / l_i[:, None]).to(q.dtype)
    if USE_DESC:
        Out.store([row0 + start_m, 0], out)
    else:
        tl.store(Out + (row0 + offs_m).to(tl.int64)[:, None] * HEAD_DIM + offs_d[None, :], out)


def uses_descriptors(arch: str) -> bool:
    """Host descriptors where the hardware has TMA: NVIDIA sm_90 and later."""
    return arch.startswith("sm_") and int(arch[3:].rstrip("a")) >= 90


def runtime_args(shape, dtype, target=None, config=None):
    rows, d = shape["B"] * shape["H"] * shape["N"], shape["D"]
    if target is not None and uses_descriptors(target.arch):
        qo, kv = (config["BLOCK_M"], d), (config["BLOCK_N"], d)
        tensors = {
            "Q": TensorDesc(dtype, (rows, d), qo),
            "K": TensorDesc(dtype, (rows, d), kv),
            "V": TensorDesc(dtype, (rows, d), kv),
            "Out": TensorDesc(dtype, (rows, d), qo),
        }
    else:
        tensors = {name: Pointer(dtype, rows * d) for name in ("Q", "K", "V", "Out")}
    return {**tensors, "N": Scalar("i32", shape["N"]), "sm_scale": Scalar("fp32", 1.0 / math.sqrt(d))}


def fixed_constexprs(shape, dtype, target=None):
    return {
        "HEAD_DIM": shape["D"],
        "CAUSAL": bool(shape["causal"]),
        "USE_DESC": target is not None and uses_descriptors(target.arch),
    }


def config_ok(shape, config):
    return (
        shape["N"] % config["BLOCK_M"] == 0
        and shape["N"] % config["BLOCK_N"] == 0
        and (not shape["causal"] or config["BLOCK_M"] % config["BLOCK_N"] == 0)
    )


def grid(shape, config):
    return (shape["N"] // config["BLOCK_M"], shape["B"] * shape["H"])


def make_inputs(shape, dtype, device, generator):
    dims = (shape["B"], shape["H"], shape["N"], shape["D"])
    return tuple(randn(dims, dtype, device, generator) for _ in range(3))


def launch(inputs, shape, config, out=None, use_desc=None):
    """Descriptors on a device with TMA (the path compiled for sm_90 targets), pointers elsewhere;
    ``use_desc`` forces one path (the interpreter checks both)."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    q, k, v = inputs
    o = torch.empty_like(q) if out is None else out
    desc = uses_descriptors(device_arch(q.device)) if use_desc is None else use_desc
    rows, d = q.numel() // shape["D"], shape["D"]
    if desc:
        qo, kv = [config["BLOCK_M"], d], [config["BLOCK_N"], d]
        args = [
            TensorDescriptor(t.view(rows, d), [rows, d], [d, 1], blk) for t, blk in ((q, qo), (k, kv), (v, kv), (o, qo))
        ]
    else:
        args = [q, k, v, o]
    attention_desc_kernel[grid(shape, config)](
        *args, shape["N"], 1.0 / math.sqrt(d), HEAD_DIM=d, CAUSAL=bool(shape["causal"]), USE_DESC=desc, **config
    )
    return o


SPEC = KernelSpec(
    name="attention_desc",
    fn=attention_desc_kernel,
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
        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2},
        {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
    ),
    amd_configs=(
        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 1, "waves_per_eu": 2},
        {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 1, "waves_per_eu": 0},
    ),
    baselines={"torch SDPA": sdpa},
    interpret_shapes=(
        {"B": 1, "H": 2, "N": 128, "D": 64, "causal": True},
        {"B": 1, "H": 1, "N": 128, "D": 64, "causal": False},
    ),
    interpret_dtypes=("fp16",),  # computes in bf16 through tl.dot: the interpreter cannot (docs/usage.md)
    tolerances={"fp16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2)},
)
