"""Ops whose Triton work is all inside ``torch.compile`` regions (tests/test_op_regions.py): a loss (the model code
teams compile), an op that compiles an ``nn.Module`` it builds, one whose region Inductor lowers wrongly
(:mod:`planted`), and one with a Triton launch of its own before its region."""
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from harness.torchutil import randn

import planted


def loss(logits, target):
    return F.cross_entropy(logits.float(), target)


_loss = torch.compile(loss)


def cross_entropy(logits, target):
    return _loss(logits, target)


def ce_inputs(shape, dtype, device, generator):
    logits = randn((shape["M"], shape["V"]), dtype, device, generator)
    # drawn where the generator lives (the CPU on the host, the GPU in the GPU path), then moved
    draw = torch.randint(0, shape["V"], (shape["M"],), generator=generator, device=generator.device)
    return logits, draw.to(device)


class Block(torch.nn.Module):
    def __init__(self, n, dtype, device):
        super().__init__()
        self.norm = torch.nn.LayerNorm(n, dtype=dtype, device=device)
        self.scale = torch.nn.Parameter(torch.full((n,), 0.5, dtype=dtype, device=device))

    def forward(self, x):
        return F.gelu(self.norm(x)) * self.scale + x


def block(x):
    return torch.compile(Block(x.shape[-1], x.dtype, x.device))(x)


_wrong = torch.compile(planted.wrong)


def wrong(x):
    return _wrong(x)


def x_inputs(shape, dtype, device, generator):
    return (randn((shape["M"], shape["N"]), dtype, device, generator),)


@triton.jit
def _square(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * x, mask=offs < n)


@torch.compile
def _activation(y, bias):
    return torch.clamp(F.gelu(y + bias) * 0.5, -1.0, 1.0)


def square_then_act(x, bias):
    """A launch of its own, then a compiled region on its result."""
    y = torch.empty_like(x)
    _square[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return _activation(y, bias)


def act_inputs(shape, dtype, device, generator):
    return randn((shape["M"], shape["N"]), dtype, device, generator), randn((shape["N"],), dtype, device, generator)


@torch.compile
def _scaled(x):
    return x * 2 + 1


def stalls_on_host(x):
    """Its region compiles under the face; run on the host (the check's run), it stalls."""
    if x.device.type == "cpu":
        import time

        time.sleep(300)
    return _scaled(x)
