"""A kernel that compiles under Triton's defaults and fails to under one compile environment: it reads
``TRITON_DISABLE_LINE_INFO`` (a codegen variable a matrix may sweep) when the worker imports it, and asserts at
compile time that it is unset. A build failing only under an opt-in environment makes its config "at risk"
(tests/test_fail_on.py)."""

import os

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar

KNOB = tl.constexpr(int(os.environ.get("TRITON_DISABLE_LINE_INFO", "0")))


@triton.jit
def knob_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    tl.static_assert(KNOB == 0, "this build fails under TRITON_DISABLE_LINE_INFO=1")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0) * 2, mask=mask)


SPEC = KernelSpec(
    name="knob",
    fn=knob_kernel,
    dims=("N",),
    dtypes=("fp32",),
    tunables=("BLOCK",),
    runtime_args=lambda shape, dtype: {
        "x_ptr": Pointer(dtype, shape["N"]),
        "out_ptr": Pointer(dtype, shape["N"]),
        "n_elements": Scalar("i32", shape["N"]),
    },
    grid=lambda shape, config: (triton.cdiv(shape["N"], config["BLOCK"]),),
    nvidia_configs=({"BLOCK": 1024, "num_warps": 4},),
    amd_configs=({"BLOCK": 1024, "num_warps": 4},),
)
