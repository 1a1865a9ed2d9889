"""fla-core's SwiGLU forward (``fla.modules.activations.ops.swiglu_fwd_kernel``), an elementwise chain under
``@triton.autotune`` (block sizes 512..8192 and num_warps 1..32 — the list fla builds at import for the vendor it
finds — key D). The launch mirrors fla's ``swiglu_fwd``; the harness forces each config while it runs."""
import triton

from fla.modules.activations.ops import swiglu_fwd_kernel

from harness.spec import KernelSpec, Pointer, Scalar


def runtime_args(shape, dtype):
    n = shape["M"] * shape["D"]
    return {"x": Pointer(dtype, n), "y": Pointer(dtype, n), "z": Pointer(dtype, n),
            "stride_x_row": Scalar("i32", shape["D"]), "stride_y_row": Scalar("i32", shape["D"]),
            "stride_z_row": Scalar("i32", shape["D"]), "T": Scalar("i32", n)}


def fixed_constexprs(shape, dtype):
    return {"D": shape["D"]}


def make_inputs(shape, dtype, device, generator):
    from harness.torchutil import randn

    return tuple(randn((shape["M"], shape["D"]), dtype, device, generator) for _ in range(2))


def launch(inputs, shape, config, out=None):
    import torch

    x, y = inputs
    z = torch.empty_like(x) if out is None else out
    n = x.numel()
    swiglu_fwd_kernel[lambda meta: (triton.cdiv(n, meta["B"]),)](x, y, z, x.stride(0), y.stride(0), z.stride(0),
                                                                 n, D=shape["D"])
    return z


def reference(inputs, shape):
    import torch

    x, y = (t.float() for t in inputs)
    return (torch.nn.functional.silu(x) * y).to(inputs[0].dtype)


SPEC = KernelSpec(
    name="fla_swiglu", fn=swiglu_fwd_kernel, dims=("M", "D"), dtypes=("fp16", "bf16", "fp32"), tunables=(),
    runtime_args=runtime_args, fixed_constexprs=fixed_constexprs,
    grid=lambda s, c: (triton.cdiv(s["M"] * s["D"], c["B"]),), make_inputs=make_inputs, launch=launch,
    reference=reference, nvidia_configs=(), amd_configs=(),
    min_bytes=lambda s, d: 3.0 * 2 * s["M"] * s["D"],
    interpret_shapes=({"M": 5, "D": 96},), interpret_dtypes=("fp16", "fp32"),
)
