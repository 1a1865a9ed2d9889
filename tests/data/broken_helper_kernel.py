"""A kernel whose helper has a bug Triton reports only as a CompilationError at the call site."""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def _scaled(x, alpha):
    return x.scale_by(alpha)  # tensors have no such method: the real reason sits in the chained cause


@triton.jit
def broken_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, _scaled(tl.load(x_ptr + offs, mask=offs < n), 2.0), mask=offs < n)


SPEC = KernelSpec(
    name="broken", fn=broken_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=lambda shape, dtype: {"x_ptr": Pointer(dtype, shape["N"]), "y_ptr": Pointer(dtype, shape["N"]),
                                       "n": Scalar("i32", shape["N"])},
    nvidia_configs=({"BLOCK": 256, "num_warps": 4},), amd_configs=(),
)
