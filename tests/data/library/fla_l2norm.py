"""fla-core's L2-norm forward kernel, brought as the library ships it: ``@triton.autotune`` on.

``fn`` is the decorated object itself (``fla.modules.norm.l2norm.l2norm_fwd_kernel_row``, an ``Autotuner``
over the ``JITFunction``); no config space is written here, so the library's own autotune list (``num_warps``
1..32, chosen by fla at import for the vendor it found) is every target's space. ``launch`` calls the kernel
as fla's wrapper does, without a config: the harness forces each config on the autotuner while it runs.
"""
import triton

from fla.modules.norm.l2norm import l2norm_fwd_kernel_row

from harness.spec import KernelSpec, Pointer, Scalar

EPS = 1e-6


def runtime_args(shape, dtype):
    n = shape["T"] * shape["D"]
    return {"x": Pointer(dtype, n), "y": Pointer(dtype, n), "rstd": Pointer("fp32", shape["T"]),
            "eps": Scalar("fp32", EPS), "D": Scalar("i32", shape["D"])}


def fixed_constexprs(shape, dtype):
    return {"BD": triton.next_power_of_2(shape["D"])}


def make_inputs(shape, dtype, device, generator):
    from harness.torchutil import randn

    return (randn((shape["T"], shape["D"]), dtype, device, generator),)


def launch(inputs, shape, config, out=None):
    import torch

    (x,) = inputs
    y, rstd = (out["y"], out["rstd"]) if out is not None else \
        (torch.empty_like(x), torch.empty(shape["T"], device=x.device, dtype=torch.float32))
    l2norm_fwd_kernel_row[(shape["T"],)](x, y, rstd, EPS, shape["D"], BD=triton.next_power_of_2(shape["D"]))
    return {"y": y, "rstd": rstd}


def reference(inputs, shape):
    import torch

    xf = inputs[0].float()
    rstd = 1.0 / torch.sqrt((xf * xf).sum(dim=-1) + EPS)
    return {"y": (xf * rstd[:, None]).to(inputs[0].dtype), "rstd": rstd}


SPEC = KernelSpec(
    name="fla_l2norm", fn=l2norm_fwd_kernel_row, dims=("T", "D"), dtypes=("fp16", "bf16", "fp32"), tunables=(),
    runtime_args=runtime_args, fixed_constexprs=fixed_constexprs, grid=lambda shape, config: (shape["T"],),
    make_inputs=make_inputs, launch=launch, reference=reference, outputs=("y", "rstd"),
    output_tolerances={"rstd": (1e-5, 1e-5)}, nvidia_configs=(), amd_configs=(),
    min_bytes=lambda shape, dtype: 4.0 * shape["T"] * shape["D"],
    interpret_shapes=({"T": 7, "D": 100},), interpret_dtypes=("fp16", "fp32"),
)
