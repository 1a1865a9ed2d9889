"""Inputs and torch references for four library ops brought with no spec (``matrix.yaml``'s ``*_op`` entries).

The ops themselves are the libraries' own functions, named in the matrix: fla-core's ``l2norm_fwd``,
``swiglu_fwd`` and ``matmul``, torchao's ``scaled_int8_mm_cuda`` (the CUDA implementation behind
``torch.ops.torchao.scaled_int8_mm``, named directly because ``torch.library`` dispatches it only for CUDA tensors).
"""
import torch

from harness.torchutil import randn


def l2norm_inputs(shape, dtype, device, generator):
    return (randn((shape["T"], shape["D"]), dtype, device, generator),)


def l2norm_reference(x):
    xf = x.float()
    rstd = 1.0 / torch.sqrt((xf * xf).sum(dim=-1) + 1e-6)
    return (xf * rstd[:, None]).to(x.dtype), rstd


def swiglu_inputs(shape, dtype, device, generator):
    return tuple(randn((shape["M"], shape["D"]), dtype, device, generator) for _ in range(2))


def swiglu_reference(x, y):
    return (torch.nn.functional.silu(x.float()) * y.float()).to(x.dtype)


def matmul_inputs(shape, dtype, device, generator):
    return (randn((shape["M"], shape["K"]), dtype, device, generator, scale=0.1),
            randn((shape["K"], shape["N"]), dtype, device, generator, scale=0.1))


def matmul_reference(a, b):
    return (a.float() @ b.float()).to(a.dtype)


def int8_mm_inputs(shape, dtype, device, generator):
    m, n, k = shape["M"], shape["N"], shape["K"]

    def int8(rows, cols):
        if str(device) == "meta":
            return torch.empty((rows, cols), dtype=torch.int8, device="meta")
        return torch.randint(-8, 8, (rows, cols), generator=generator, device=generator.device,
                             dtype=torch.int8).to(device)

    return (int8(m, k), int8(k, n), randn((m, 1), dtype, device, generator, scale=0.01).abs(),
            randn((1, n), dtype, device, generator, scale=0.01).abs())


def int8_mm_reference(a, b, row_scale, col_scale):
    out = (a.float() @ b.float()) * row_scale.float() * col_scale.float()
    return out.to(row_scale.dtype)
