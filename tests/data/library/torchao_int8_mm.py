"""torchao's row/column-scaled int8 GEMM (``torchao.prototype.quantized_training.int8_mm._scaled_int8_mm_kernel``)
as shipped: ``@triton.autotune`` (27 tiles, key M, N, K and the K strides) over ``@triton.heuristics`` (EVEN_K
from K and the config's BLOCK_K) over the JITFunction. Compile-only here (no int8 case dtype in the harness):
the case dtype names the output and scales, the operands are int8."""
from torchao.prototype.quantized_training.int8_mm import _scaled_int8_mm_kernel

from harness.spec import KernelSpec, Pointer, Scalar


def runtime_args(shape, dtype):
    m, n, k = shape["M"], shape["N"], shape["K"]
    i32 = lambda v: Scalar("i32", v)  # noqa: E731
    return {"A_ptr": Pointer("i8", m * k), "B_ptr": Pointer("i8", k * n), "C_ptr": Pointer(dtype, m * n),
            "row_scale_ptr": Pointer(dtype, m), "col_scale_ptr": Pointer(dtype, n), "M": i32(m), "N": i32(n),
            "K": i32(k), "stride_am": i32(k), "stride_ak": i32(1), "stride_bk": i32(n), "stride_bn": i32(1),
            "stride_cm": i32(n), "stride_cn": i32(1)}


SPEC = KernelSpec(
    name="torchao_int8_mm", fn=_scaled_int8_mm_kernel, dims=("M", "N", "K"), dtypes=("fp32", "bf16"),
    tunables=(), runtime_args=runtime_args, nvidia_configs=(), amd_configs=(),
    grid=lambda s, c: (-(-s["M"] // c["BLOCK_M"]) * -(-s["N"] // c["BLOCK_N"]),),
    flops=lambda s, d: 2.0 * s["M"] * s["N"] * s["K"],
)
