"""A user's spec that imports its kernel from a sibling module (no package, no PYTHONPATH)."""
import triton

from harness.spec import KernelSpec, Pointer, Scalar
from scale_jit import scale_kernel

ALPHA = 3.0


def make_inputs(shape, dtype, device, generator):
    import torch

    return (torch.randn(shape["N"], generator=generator, device=generator.device).to(device),)


def launch(inputs, shape, config, out=None):
    import torch

    (x,) = inputs
    y = torch.empty_like(x) if out is None else out
    scale_kernel[(triton.cdiv(shape["N"], config["BLOCK"]),)](x, y, shape["N"], ALPHA, **config)
    return y


SPEC = KernelSpec(
    name="scale", fn=scale_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=lambda shape, dtype: {"x_ptr": Pointer(dtype, shape["N"]), "y_ptr": Pointer(dtype, shape["N"]),
                                       "n": Scalar("i32", shape["N"]), "alpha": Scalar("fp32", ALPHA)},
    make_inputs=make_inputs, launch=launch, reference=lambda inputs, shape: inputs[0] * ALPHA,
    nvidia_configs=({"BLOCK": 256, "num_warps": 4},), amd_configs=({"BLOCK": 256, "num_warps": 4},),
    interpret_shapes=({"N": 1000},),
)

# compile-only: the same kernel with nothing to run it (only the portability verdict is wanted)
COMPILE_ONLY = KernelSpec(
    name="scale_static", fn=scale_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=SPEC.runtime_args,
    nvidia_configs=({"BLOCK": 256, "num_warps": 4}, {"BLOCK": 1024, "num_warps": 8}),
    amd_configs=({"BLOCK": 256, "num_warps": 4, "allow_flush_denorm": True},),
)
