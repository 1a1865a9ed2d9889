"""A library that picks its kernel per vendor and reads a switch at import (tests/test_import_env.py).

``fn`` is a function of the target; the NVIDIA kernel's autotune list depends on ``TOYLIB_WIDE``, which the
library reads once, when it is imported: the matrix gives it as the entry's ``import_env``.
"""
import os

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar

# a library's vendor switch, read once, at import
WIDE = os.environ.get("TOYLIB_WIDE") == "1"


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in ((2048, 4096) if WIDE else (256,))],
                 key=["n"])
@triton.jit
def copy_nv(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=8)], key=["n"])
@triton.jit
def copy_amd(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 0, mask=offs < n)


def args(shape, dtype):
    return {"x_ptr": Pointer(dtype, shape["N"]), "y_ptr": Pointer(dtype, shape["N"]), "n": Scalar("i32", shape["N"])}


SPEC = KernelSpec(name="copy", fn=lambda target: copy_amd if target.vendor == "amd" else copy_nv, dims=("N",),
                  dtypes=("fp32",), tunables=(), runtime_args=args, nvidia_configs=(), amd_configs=())
