"""GPU test kernels that go wrong on purpose: MODE=0 writes half the output, MODE=1 reads far out of bounds."""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def faulty_kernel(x_ptr, y_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MODE == 1:
        x = tl.load(x_ptr + offs + (1 << 40))  # far outside any allocation: illegal address
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n // 2 if MODE == 0 else offs < n)


def make_inputs(shape, dtype, device, generator):
    import torch

    return (torch.randn(shape["N"], generator=generator, device=generator.device).to(device),)


def launch(inputs, shape, config, out=None):
    import torch

    (x,) = inputs
    y = torch.empty_like(x) if out is None else out
    faulty_kernel[(triton.cdiv(shape["N"], config["BLOCK"]),)](x, y, shape["N"], **config)
    return y


SPEC = KernelSpec(
    name="faulty", fn=faulty_kernel, dims=("N",), dtypes=("fp32",), tunables=("MODE", "BLOCK"),
    runtime_args=lambda shape, dtype: {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype), "n": Scalar("i32", shape["N"])},
    grid=lambda s, c: (triton.cdiv(s["N"], c["BLOCK"]),), make_inputs=make_inputs, launch=launch,
    reference=lambda inputs, shape: inputs[0].clone(), flops=lambda s, d: 0.0, min_bytes=lambda s, d: 8.0 * s["N"],
    nvidia_configs=({"MODE": 2, "BLOCK": 1024, "num_warps": 4},), amd_configs=(),
)
