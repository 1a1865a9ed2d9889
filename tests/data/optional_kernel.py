"""A kernel with an optional pointer (None at launch) and constexpr parameters that have Python defaults."""
from __future__ import annotations

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def scale_kernel(x_ptr, w_ptr, y_ptr, n, BLOCK: tl.constexpr = 256, USE_W: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if USE_W:
        x = x * tl.load(w_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x, mask=mask)


def _unused(*args, **kwargs):
    raise NotImplementedError("compile-only test kernel")


SPEC = KernelSpec(
    name="optional_args", fn=scale_kernel, dims=("N",), dtypes=("fp32",), tunables=(),
    runtime_args=lambda s, d: {"x_ptr": Pointer(d, s["N"]), "w_ptr": None, "y_ptr": Pointer(d, s["N"]),
                               "n": Scalar("i32", s["N"])},
    grid=lambda s, c: (1,), make_inputs=_unused, launch=_unused, reference=_unused,
    flops=lambda s, d: 0.0, min_bytes=lambda s, d: 0.0,
    nvidia_configs=({"num_warps": 4},), amd_configs=({"num_warps": 4},),
)
