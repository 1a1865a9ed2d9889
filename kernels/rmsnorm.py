"""rmsnorm: forward RMSNorm with two outputs, as training frameworks write it.

``Y = X / rms(X) * W`` and ``RSTD = 1 / rms(X)`` per row (kept in fp32 for the backward
pass). Each program owns BLOCK_M whole rows: the row is read once, reduced in fp32 in
registers, and written once. The weight is optional (``affine`` in the shape: ``False``
passes ``None``, which Triton's launcher turns into a constexpr and the kernel drops).

What it exercises in the harness: two named outputs with their own tolerances (``RSTD``
is fp32 whatever the input dtype), both poisoned with NaN before the check; an optional
pointer argument.
"""

from __future__ import annotations

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar
from harness.torchutil import element_size, randn

EPS = 1e-6


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, M, N, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    y = x * rstd[:, None]
    if w_ptr is not None:
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        y = y * w[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + rows, rstd, mask=rows < M)


def runtime_args(shape, dtype):
    n = shape["M"] * shape["N"]
    return {
        "x_ptr": Pointer(dtype, n),
        "w_ptr": Pointer(dtype, shape["N"]) if shape["affine"] else None,
        "y_ptr": Pointer(dtype, n),
        "rstd_ptr": Pointer("fp32", shape["M"]),
        "M": Scalar("i32", shape["M"]),
        "N": Scalar("i32", shape["N"]),
        "eps": Scalar("fp32", EPS),
    }


def fixed_constexprs(shape, dtype):
    return {"BLOCK_N": triton.next_power_of_2(shape["N"])}


def config_ok(shape, config):
    return config["BLOCK_M"] * triton.next_power_of_2(shape["N"]) <= 65536


def grid(shape, config):
    return (triton.cdiv(shape["M"], config["BLOCK_M"]),)


def make_inputs(shape, dtype, device, generator):
    x = randn((shape["M"], shape["N"]), dtype, device, generator)
    w = 1.0 + 0.1 * randn((shape["N"],), dtype, device, generator) if shape["affine"] else None
    return (x, w)


def launch(inputs, shape, config, out=None):
    import torch

    x, w = inputs
    y, rstd = (
        (out["y"], out["rstd"])
        if out is not None
        else (torch.empty_like(x), torch.empty(shape["M"], device=x.device, dtype=torch.float32))
    )
    rmsnorm_kernel[grid(shape, config)](
        x, w, y, rstd, shape["M"], shape["N"], EPS, BLOCK_N=triton.next_power_of_2(shape["N"]), **config
    )
    return {"y": y, "rstd": rstd}


def reference(inputs, shape):
    import torch

    x, w = inputs
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(dim=-1) + EPS)
    y = xf * rstd[:, None]
    if w is not None:
        y = y * w.float()
    return {"y": y.to(x.dtype), "rstd": rstd}


def min_bytes(shape, dtype):
    """X read and Y written once, W read once, RSTD written once (fp32)."""
    elements = 2 * shape["M"] * shape["N"] + (shape["N"] if shape["affine"] else 0)
    return float(elements * element_size(dtype) + 4 * shape["M"])


def torch_rms_norm(inputs, shape):
    """``torch.nn.functional.rms_norm``: it returns no RSTD, so only Y is timed and compared."""
    import torch

    x, w = inputs
    return {"y": torch.nn.functional.rms_norm(x, (shape["N"],), weight=w, eps=EPS)}


SPEC = KernelSpec(
    name="rmsnorm",
    fn=rmsnorm_kernel,
    dims=("M", "N"),
    flags=("affine",),
    dtypes=("fp16", "bf16", "fp32"),
    tunables=("BLOCK_M",),
    runtime_args=runtime_args,
    fixed_constexprs=fixed_constexprs,
    config_ok=config_ok,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    outputs=("y", "rstd"),
    output_tolerances={"rstd": (1e-5, 1e-5)},
    flops=lambda shape, dtype: 4.0 * shape["M"] * shape["N"],
    min_bytes=min_bytes,
    nvidia_configs=(
        {"BLOCK_M": 1, "num_warps": 4, "num_stages": 1},
        {"BLOCK_M": 1, "num_warps": 8, "num_stages": 1},
        {"BLOCK_M": 2, "num_warps": 8, "num_stages": 1},
        {"BLOCK_M": 4, "num_warps": 16, "num_stages": 1},
    ),
    amd_configs=(
        {"BLOCK_M": 1, "num_warps": 4, "num_stages": 1, "waves_per_eu": 0},
        {"BLOCK_M": 1, "num_warps": 8, "num_stages": 1, "waves_per_eu": 0},
        {"BLOCK_M": 2, "num_warps": 8, "num_stages": 1, "waves_per_eu": 0},
    ),
    baselines={"torch.nn.functional.rms_norm": torch_rms_norm},
    interpret_shapes=({"M": 5, "N": 1000, "affine": True}, {"M": 3, "N": 33, "affine": False}),
    tolerances={"fp16": (4e-3, 1e-2), "bf16": (3e-2, 2e-2), "fp32": (1e-5, 1e-5)},
)
