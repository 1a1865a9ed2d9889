"""Why ``kernels/fused_activation.py`` does not call erf: three variants of the same kernel, side by side.

On 8192 x 8192 bf16 (the issue's shape), each timed by the harness's own ``bench``:

- ``libdevice_erf``: GELU as 0.5 v (1 + erf(v / sqrt 2)), erf from libdevice (the kernel before run G);
- ``fitted_phi``: the kernel as it is, v * normal_cdf(v) (one exp2, one reciprocal);
- ``fitted_phi_streaming``: the same with streaming cache hints (x loaded ``evict_first``, y stored ``.cs``);
- ``no_gelu``: the same loads, bias add, scale, clamp and store with GELU left out — the memory floor
  of this access pattern, not a correct kernel.

Also prints the device copy bandwidth measured in the same process and each variant's share of it.
Run on a GPU host: ``PYTHONPATH=. python3 benchmarks/gelu_variants.py``.
"""

from __future__ import annotations

import json
import sys

import torch
import triton
import triton.language as tl

from harness.device.timing import Flusher, bench, measure_copy_tbps
from kernels.fused_activation import HI, LO, SCALE, normal_cdf

VARIANTS = {"libdevice_erf": 0, "fitted_phi": 1, "fitted_phi_streaming": 3, "no_gelu": 2}


@triton.jit
def variant_kernel(
    x_ptr, bias_ptr, y_ptr, M, N, scale, lo, hi, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VARIANT: tl.constexpr
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols < N)[None, :]
    offs = rows[:, None] * N + cols[None, :]
    b = tl.load(bias_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
    if VARIANT == 3:
        v = tl.load(x_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32) + b
    else:
        v = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32) + b
    if VARIANT == 0:
        g = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    elif VARIANT == 1 or VARIANT == 3:
        g = v * normal_cdf(v)
    else:
        g = v
    y = tl.minimum(tl.maximum(g * scale, lo), hi).to(y_ptr.dtype.element_ty)
    if VARIANT == 3:
        tl.store(y_ptr + offs, y, mask=mask, cache_modifier=".cs")
    else:
        tl.store(y_ptr + offs, y, mask=mask)


def main() -> int:
    m = n = 8192
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(m, n, device="cuda", generator=gen).mul_(2.0).to(torch.bfloat16)
    bias = torch.randn(n, device="cuda", generator=gen).to(torch.bfloat16)
    ref = torch.clamp(torch.nn.functional.gelu(x.float() + bias.float()) * SCALE, LO, HI)
    flusher = Flusher(int(torch.cuda.get_device_properties(0).L2_cache_size))
    copy = measure_copy_tbps()
    nbytes = (2 * m * n + n) * 2
    configs = [
        (8, 256, 4),
        (16, 256, 8),
        (32, 256, 8),
        (16, 512, 8),
        (32, 512, 16),
        (8, 1024, 8),
        (32, 1024, 16),
        (64, 512, 16),
    ]
    out: dict = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "copy_tbps": copy,
        "variants": {},
    }
    for name, variant in VARIANTS.items():
        best = None
        for bm, bn, warps in configs:
            y = torch.empty_like(x)

            def call(y=y, bm=bm, bn=bn, warps=warps):
                variant_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
                    x, bias, y, m, n, SCALE, LO, HI, BLOCK_M=bm, BLOCK_N=bn, VARIANT=variant, num_warps=warps
                )

            call()
            err = float((y.float() - ref).abs().max())
            timing = bench(lambda i: call, 1, flusher)
            row = {
                "config": [bm, bn, warps],
                "median_us": timing.median_us,
                "max_abs_err": err,
                "pct_copy_bw": 100 * nbytes / (timing.median_us * 1e-6) / (copy * 1e12),
            }
            if best is None or row["median_us"] < best["median_us"]:
                best = row
        out["variants"][name] = best
        print(
            f"{name:14s} {best['median_us']:8.1f} us  {best['pct_copy_bw']:5.1f}% of copy BW  "
            f"config {best['config']}  max|err| {best['max_abs_err']:.2e}"
        )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
