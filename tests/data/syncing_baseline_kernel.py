"""A copy kernel with two baselines: one that only enqueues work, one that reads a value back to the host.

The second (``.item()`` inside the timed call) must be refused by the GPU worker: its time would include
the host's launches. Used by tests/gpu/test_on_device.py.
"""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def runtime_args(shape, dtype):
    return {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype), "n": Scalar("i32", shape["N"])}


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
    return inputs[0]


def enqueues_only(inputs, shape):
    return inputs[0].clone()


def reads_back(inputs, shape):
    (x,) = inputs
    if float(x.abs().max().item()) < 0:  # never true: the read-back is the point
        return x
    return x.clone()


SPEC = KernelSpec(
    name="syncing_baseline", fn=copy_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=runtime_args, grid=lambda s, c: (triton.cdiv(s["N"], c["BLOCK"]),), make_inputs=make_inputs,
    launch=launch, reference=reference, flops=lambda s, d: 0.0, min_bytes=lambda s, d: 8.0 * s["N"],
    nvidia_configs=({"BLOCK": 1024, "num_warps": 4},), amd_configs=({"BLOCK": 1024, "num_warps": 4},),
    baselines={"clone": enqueues_only, "clone after .item()": reads_back},
    interpret_shapes=({"N": 100},),
)
