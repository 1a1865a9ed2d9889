"""A kernel whose compile cost is set by how many times its loop body is unrolled (``REPS``): the compile-cost
test builds it as is and with ``REPS`` raised (a real, deliberately costlier compile of the same configs)."""

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar

REPS = tl.constexpr(2)


@triton.jit
def costly_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = x
    for _ in tl.static_range(REPS):
        acc = tl.sin(acc) * x + tl.cos(acc)
    tl.store(out_ptr + offs, acc, mask=mask)


SPEC = KernelSpec(
    name="costly",
    fn=costly_kernel,
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
