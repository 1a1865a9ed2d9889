"""Probe for ``kernels/fused_activation.normal_cdf``: Phi over a dense fp32 grid against float64.

The reference is ``torch.special.ndtr`` in float64; the inputs cover [-8, 8] densely
(where Phi is neither 0 nor 1 in fp32) and [-60, 60] coarsely (the tails and the
overflowing exponent). Run under the interpreter, the kernel's fp32 arithmetic is
numpy's, so this checks the fitted coefficients as the kernel holds them.
"""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar
from kernels.fused_activation import normal_cdf

GRID_POINTS = 1 << 21


@triton.jit
def normal_cdf_probe(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, normal_cdf(x), mask=offs < n)


def make_inputs(shape, dtype, device, generator):
    import torch

    dense = torch.linspace(-8.0, 8.0, shape["N"] - shape["N"] // 8, dtype=torch.float64)
    tails = torch.linspace(-60.0, 60.0, shape["N"] // 8, dtype=torch.float64)
    return (torch.cat([dense, tails]).float().to(device),)


def launch(inputs, shape, config):
    import torch

    (x,) = inputs
    y = torch.empty_like(x)
    normal_cdf_probe[(triton.cdiv(x.numel(), config["BLOCK"]),)](x, y, x.numel(), **config)
    return y


def reference(inputs, shape):
    import torch

    (x,) = inputs
    return torch.special.ndtr(x.double())


SPEC = KernelSpec(
    name="normal_cdf_probe", fn=normal_cdf_probe, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=lambda s, d: {"x_ptr": Pointer("fp32"), "y_ptr": Pointer("fp32"), "n": Scalar("i32", s["N"])},
    grid=lambda s, c: (triton.cdiv(s["N"], c["BLOCK"]),), make_inputs=make_inputs, launch=launch,
    reference=reference, flops=lambda s, d: 0.0, min_bytes=lambda s, d: 8.0 * s["N"],
    nvidia_configs=({"BLOCK": 1 << 16, "num_warps": 4},), amd_configs=({"BLOCK": 1 << 16, "num_warps": 4},),
    interpret_shapes=({"N": GRID_POINTS},),
    tolerances={"fp32": (2e-7, 0.0)},
)
