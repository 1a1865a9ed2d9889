"""vector_add: out = x + y over a 1-D tensor of any length (masked tail)."""

from __future__ import annotations

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar
from harness.torchutil import element_size, randn


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def runtime_args(shape, dtype):
    n = shape["N"]
    return {
        "x_ptr": Pointer(dtype, n),
        "y_ptr": Pointer(dtype, n),
        "out_ptr": Pointer(dtype, n),
        "n_elements": Scalar("i32", shape["N"]),
    }


def grid(shape, config):
    return (triton.cdiv(shape["N"], config["BLOCK"]),)


def make_inputs(shape, dtype, device, generator):
    return (randn((shape["N"],), dtype, device, generator), randn((shape["N"],), dtype, device, generator))


def launch(inputs, shape, config, out=None):
    import torch

    x, y = inputs
    out = torch.empty_like(x) if out is None else out
    vector_add_kernel[grid(shape, config)](x, y, out, shape["N"], **config)
    return out


def reference(inputs, shape):
    x, y = inputs
    return x + y


def torch_add(inputs, shape):
    x, y = inputs
    return x + y


SPEC = KernelSpec(
    name="vector_add",
    fn=vector_add_kernel,
    dims=("N",),
    dtypes=("fp16", "bf16", "fp32"),
    tunables=("BLOCK",),
    runtime_args=runtime_args,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    flops=lambda shape, dtype: float(shape["N"]),
    min_bytes=lambda shape, dtype: 3.0 * shape["N"] * element_size(dtype),
    nvidia_configs=(
        {"BLOCK": 1024, "num_warps": 4, "num_stages": 2},
        {"BLOCK": 4096, "num_warps": 8, "num_stages": 2},
        {"BLOCK": 8192, "num_warps": 16, "num_stages": 2},
    ),
    amd_configs=(
        {"BLOCK": 1024, "num_warps": 4, "num_stages": 1, "waves_per_eu": 0},
        {"BLOCK": 4096, "num_warps": 8, "num_stages": 1, "waves_per_eu": 0},
    ),
    baselines={"torch add": torch_add},
    interpret_dtypes=("fp16", "fp32"),  # bf16 arithmetic is not interpretable (see KernelSpec)
    interpret_shapes=({"N": 1}, {"N": 3001}),
    tolerances={"fp16": (0.0, 0.0), "bf16": (0.0, 0.0), "fp32": (0.0, 0.0)},
)
