"""A row copy whose launch passes a padded row stride (N + 8) where runtime_args declares N: the spec and the
launch disagree, and ``harness validate`` must say so, naming the argument."""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def rows(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + r * N + cols, tl.load(x_ptr + r * stride + cols, mask=cols < N), mask=cols < N)


def make_inputs(shape, dtype, device, generator):
    import torch

    padded = torch.randn(shape["M"], shape["N"] + 8, generator=generator, device=generator.device).to(device)
    return (padded[:, :shape["N"]],)


def launch(inputs, shape, config, out=None):
    import torch

    (x,) = inputs
    y = torch.empty(shape["M"], shape["N"], device=x.device, dtype=x.dtype) if out is None else out
    rows[(shape["M"],)](x, y, x.stride(0), shape["N"], **config)
    return y


SPEC = KernelSpec(
    name="rows", fn=rows, dims=("M", "N"), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=lambda s, d: {"x_ptr": Pointer(d), "y_ptr": Pointer(d, s["M"] * s["N"]),
                               "stride": Scalar("i32", s["N"]), "N": Scalar("i32", s["N"])},
    make_inputs=make_inputs, launch=launch, reference=lambda inputs, shape: inputs[0].contiguous(),
    nvidia_configs=({"BLOCK": 128, "num_warps": 4},), amd_configs=({"BLOCK": 128, "num_warps": 4},),
    interpret_shapes=({"M": 3, "N": 100},),
)
