"""A kernel whose work is in a ``noinline`` helper (its own function in the PTX, the cubin and the AMDGCN), with
multiply-adds that ``TRITON_DEFAULT_FP_FUSION=0`` keeps apart: the figures must be the kernel's, of that binary."""
from __future__ import annotations

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit(noinline=True)
def poly_helper(x_ptr, y_ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = ((x * 1.5 + 0.25) * x + 3.0) * x + tl.exp(x)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def poly_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    poly_helper(x_ptr, y_ptr, tl.program_id(0) * BLOCK, n, BLOCK)


def _unused(*args, **kwargs):
    raise NotImplementedError("compile-only test kernel")


SPEC = KernelSpec(
    name="noinline_poly", fn=poly_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=lambda s, d: {"x_ptr": Pointer(d, s["N"]), "y_ptr": Pointer(d, s["N"]), "n": Scalar("i32", s["N"])},
    grid=lambda s, c: (triton.cdiv(s["N"], c["BLOCK"]),),
    flops=lambda s, d: 0.0, min_bytes=lambda s, d: 0.0,
    nvidia_configs=({"BLOCK": 1024, "num_warps": 4},), amd_configs=({"BLOCK": 1024, "num_warps": 4},),
)
