"""A test kernel built to misbehave on chosen shapes, for isolation tests.

Its signature hook runs only in the compile worker: N=64 aborts that process
(SIGABRT, as triton 3.2 does for sm_100), N=32 hangs, N=16 raises; every other
N compiles normally. With
``WRONG=1`` in the environment its reference is wrong, so the interpreter
check must report a mismatch.
"""
import os
import time

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def runtime_args(shape, dtype):
    _misbehave(shape["N"])
    return {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype), "n": Scalar("i32", shape["N"])}


def _misbehave(n):
    if n == 64:
        os.abort()
    if n == 32:
        time.sleep(600)
    if n == 16:
        raise ValueError("N=16 is refused by this test kernel")


def make_inputs(shape, dtype, device, generator):
    import torch

    return (torch.randn(shape["N"], generator=generator, device=generator.device).to(device),)


def launch(inputs, shape, config):
    import torch

    (x,) = inputs
    y = torch.empty_like(x)
    copy_kernel[(triton.cdiv(shape["N"], config["BLOCK"]),)](x, y, shape["N"], **config)
    return y


def reference(inputs, shape):
    (x,) = inputs
    return x + 1 if os.environ.get("WRONG") == "1" else x


SPEC = KernelSpec(
    name="misbehaving", fn=copy_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=runtime_args, grid=lambda s, c: (1,), make_inputs=make_inputs, launch=launch,
    reference=reference, flops=lambda s, d: 0.0, min_bytes=lambda s, d: 8.0 * s["N"],
    nvidia_configs=({"BLOCK": 128, "num_warps": 4},), amd_configs=({"BLOCK": 256, "num_warps": 4},),
    interpret_shapes=({"N": 100},),
)
