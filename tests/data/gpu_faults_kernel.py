"""A copy kernel that goes wrong on the GPU on purpose, chosen per case by the shape's ``FAULT``.

FAULT=1 copies correctly; 2 reads far outside any allocation (an illegal address: a sticky
error that poisons the CUDA context); 3 writes NaN everywhere; 4 launches a grid whose second
axis exceeds the device's limit of 65535 blocks (the driver refuses the launch); 5 spins forever
(a GPU hang that only a timeout ends). Every mode compiles and fits statically: each fault shows
only when the kernel runs, which is what the whole-run test in ``tests/gpu`` needs.
"""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def fault_copy(x_ptr, y_ptr, n, FAULT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if FAULT == 2:
        x = tl.load(x_ptr + offs + (1 << 40))  # 8 TiB past the buffer
    else:
        x = tl.load(x_ptr + offs, mask=mask)
    if FAULT == 3:
        x = (x - x) / (x - x)  # 0/0
    if FAULT == 5:
        spins = tl.load(x_ptr) * 0.0
        while spins == spins:  # never false for a finite input, and the compiler cannot know it
            spins += tl.load(x_ptr + 1) * 0.0
        x += spins
    tl.store(y_ptr + offs, x, mask=mask)


def make_inputs(shape, dtype, device, generator):
    import torch

    return (torch.randn(shape["N"], generator=generator, device=generator.device).to(device),)


def _grid(shape, config):
    return (triton.cdiv(shape["N"], config["BLOCK"]), 1 << 17 if shape["FAULT"] == 4 else 1)


def launch(inputs, shape, config, out=None):
    import torch

    (x,) = inputs
    y = torch.empty_like(x) if out is None else out
    fault_copy[_grid(shape, config)](x, y, shape["N"], FAULT=shape["FAULT"], **config)
    return y


SPEC = KernelSpec(
    name="gpu_faults", fn=fault_copy, dims=("N", "FAULT"), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=lambda shape, dtype: {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype),
                                       "n": Scalar("i32", shape["N"])},
    fixed_constexprs=lambda shape, dtype: {"FAULT": shape["FAULT"]},
    grid=_grid, make_inputs=make_inputs, launch=launch,
    reference=lambda inputs, shape: inputs[0].clone(), flops=lambda s, d: 0.0, min_bytes=lambda s, d: 8.0 * s["N"],
    nvidia_configs=({"BLOCK": 1024, "num_warps": 4},), amd_configs=({"BLOCK": 1024, "num_warps": 4},),
)
