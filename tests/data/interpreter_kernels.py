"""Kernels for the interpreter's own checks (tests/test_interpreter_checks.py).

``SPEC_FLOAT``: a Python float argument used as a tensor (``a.to``) and two libdevice calls — it must pass.
``SPEC_BESSEL``: a libdevice function the harness does not map (``j0``): the interpreter cannot run it, which is
``interpret-unsupported``, not the kernel's error. ``SPEC_WRONG``: a reference that disagrees, for a known failure.
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def scaled_tanh(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    y = libdevice.tanh(x) * a.to(tl.float32) + libdevice.erf(x)
    tl.store(y_ptr + offs, y, mask=offs < n)


@triton.jit
def bessel(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, libdevice.j0(x) * a, mask=offs < n)


def _args(shape, dtype):
    return {"x_ptr": Pointer(dtype, shape["N"]), "y_ptr": Pointer(dtype, shape["N"]), "n": Scalar("i32", shape["N"]),
            "a": Scalar("fp32", 2.0)}


def _inputs(shape, dtype, device, generator):
    import torch

    return (torch.randn(shape["N"], generator=generator, device=generator.device).to(device),)


def _launcher(kernel):
    def launch(inputs, shape, config, out=None):
        import torch

        (x,) = inputs
        y = torch.empty_like(x) if out is None else out
        kernel[(triton.cdiv(shape["N"], config["BLOCK"]),)](x, y, shape["N"], 2.0, **config)
        return y
    return launch


def _expected(inputs, shape):
    import torch

    return torch.tanh(inputs[0]) * 2.0 + torch.erf(inputs[0])


_COMMON = dict(dims=("N",), dtypes=("fp32",), tunables=("BLOCK",), runtime_args=_args, make_inputs=_inputs,
               nvidia_configs=({"BLOCK": 128, "num_warps": 4},), amd_configs=({"BLOCK": 128, "num_warps": 4},),
               interpret_shapes=({"N": 300},))
SPEC_FLOAT = KernelSpec(name="scaled_tanh", fn=scaled_tanh, launch=_launcher(scaled_tanh), reference=_expected,
                        **_COMMON)
SPEC_BESSEL = KernelSpec(name="bessel", fn=bessel, launch=_launcher(bessel), reference=lambda i, s: 2.0 * i[0],
                         **_COMMON)
SPEC_WRONG = KernelSpec(name="wrong", fn=scaled_tanh, launch=_launcher(scaled_tanh),
                        reference=lambda i, s: _expected(i, s) + 1.0, **_COMMON)
