"""Glue for three libraries' ops captured under each target's virtual device (the last entries of ``matrix.yaml``).

Every op is the library's own function; the glue is the inputs (and, for conch, a two-line op that quantises Q
and K the way an attention layer does: the same kernel launched twice with other constexprs). fla-core's L2 norm
takes the inputs and reference of ``ops.py``.
"""
import torch

from harness.torchutil import randn


def quantise_qk(q, k, scale):
    """conch's static-scale fp8 quantiser for Q, then for K (its output format is the vendor's own fp8)."""
    from conch.ops.quantization.fp8 import scaled_fp8_quant

    return scaled_fp8_quant(q, scale)[0], scaled_fp8_quant(k, scale)[0]


def qk_inputs(shape, dtype, device, generator):
    q = randn((shape["T"], shape["DQ"]), dtype, device, generator)
    k = randn((shape["T"], shape["DK"]), dtype, device, generator)
    return q, k, torch.full((1,), 0.05, dtype=torch.float32, device=device)


def quantise_qk_reference(q, k, scale):
    fp8 = torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn
    top = torch.finfo(fp8).max
    return tuple((x.float() / scale).clamp(-top, top).to(fp8) for x in (q, k))


def int8_mm_inputs(shape, dtype, device, generator):
    m, n, k = shape["M"], shape["N"], shape["K"]

    def int8(rows, cols):
        if str(device) == "meta" or str(device).startswith("cuda") and not torch.cuda.is_available():
            return torch.empty((rows, cols), dtype=torch.int8, device=device)
        return torch.randint(-8, 8, (rows, cols), generator=generator, device=generator.device,
                             dtype=torch.int8).to(device)

    return (int8(m, k), int8(k, n), randn((m, 1), dtype, device, generator, scale=0.01).abs(),
            randn((1, n), dtype, device, generator, scale=0.01).abs())
