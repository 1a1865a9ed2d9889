"""fla-core's GEMM (``fla.ops.utils.matmul.matmul_kernel``) as shipped: ``@triton.heuristics`` (HAS_ALPHA, HAS_BETA
from whether alpha / beta are given) over ``@triton.autotune`` (eight tiles, key M, N, K) over the JITFunction.

The launch mirrors fla's own ``matmul`` wrapper (batch 1, no activation, no input); the harness forces each
autotune config while it runs, and evaluates the heuristics per build for the cross-compile.
"""
import torch
import triton

from fla.ops.utils.matmul import matmul_kernel

from harness.spec import KernelSpec, Pointer, Scalar


def runtime_args(shape, dtype):
    m, n, k = shape["M"], shape["N"], shape["K"]
    i32 = lambda v: Scalar("i32", v)  # noqa: E731
    return {"a": Pointer(dtype, m * k), "b": Pointer(dtype, k * n), "c": Pointer(dtype, m * n),
            "input": None, "alpha": None, "beta": None, "M": i32(m), "N": i32(n), "K": i32(k),
            "stride_ab": i32(m * k), "stride_am": i32(k), "stride_ak": i32(1), "stride_bk": i32(n),
            "stride_bn": i32(1), "stride_cb": i32(m * n), "stride_cm": i32(n), "stride_cn": i32(1)}


def fixed_constexprs(shape, dtype):
    # as fla's ``matmul`` decides it: TF32 allowed for every input but fp32 (a no-op for 16-bit inputs' dots)
    return {"ACTIVATION": "", "HAS_INPUT": False, "ALLOW_TF32": dtype != "fp32"}


def make_inputs(shape, dtype, device, generator):
    from harness.torchutil import randn

    return (randn((shape["M"], shape["K"]), dtype, device, generator),
            randn((shape["K"], shape["N"]), dtype, device, generator))


def launch(inputs, shape, config, out=None):
    a, b = inputs
    a3 = a.unsqueeze(0)
    c = a.new_empty(1, shape["M"], shape["N"]) if out is None else out.unsqueeze(0)
    grid = lambda meta: (1, triton.cdiv(shape["M"], meta["BM"]), triton.cdiv(shape["N"], meta["BN"]))  # noqa: E731
    matmul_kernel[grid](a3, b, c, None, None, None, shape["M"], shape["N"], shape["K"],
                        a3.stride(0), a3.stride(1), a3.stride(2), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), c.stride(2), ACTIVATION="", ALLOW_TF32=a.dtype != torch.float32,
                        HAS_INPUT=False)
    return c.squeeze(0)


def reference(inputs, shape):
    a, b = inputs
    return (a.float() @ b.float()).to(a.dtype)


SPEC = KernelSpec(
    name="fla_matmul", fn=matmul_kernel, dims=("M", "N", "K"), dtypes=("fp16", "bf16"), tunables=(),
    runtime_args=runtime_args, fixed_constexprs=fixed_constexprs,
    grid=lambda s, c: (1, triton.cdiv(s["M"], c["BM"]), triton.cdiv(s["N"], c["BN"])),
    make_inputs=make_inputs, launch=launch, reference=reference, nvidia_configs=(), amd_configs=(),
    flops=lambda s, d: 2.0 * s["M"] * s["N"] * s["K"],
    min_bytes=lambda s, d: 2.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
    interpret_shapes=({"M": 40, "N": 48, "K": 72},), interpret_dtypes=("fp16",),
    tolerances={"fp16": (2e-2, 2e-2)},
)
