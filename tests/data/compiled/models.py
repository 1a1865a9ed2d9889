"""Functions and a module for torch.compile, with bad ones: tests/test_compiled_capture.py and
benchmarks/compiled_parity.py (the GPU parity run) use the same."""
import os
import time

import torch
import torch.nn.functional as F
from harness.torchutil import randn


def activation(x, bias):
    return torch.clamp(F.gelu(x + bias) * 0.5, -1.0, 1.0)


def act_inputs(shape, dtype, device, generator):
    return (randn((shape["M"], shape["N"]), dtype, device, generator), randn((shape["N"],), dtype, device, generator))


def softmax(x):
    return torch.softmax(x, dim=-1)


def full_sum(x):
    return x.float().pow(2).sum()


def one_input(shape, dtype, device, generator):
    return (randn((shape["M"], shape["N"]), dtype, device, generator),)


def mm_bias_gelu(a, b, bias):
    return F.gelu(a @ b + bias)


def mm_inputs(shape, dtype, device, generator):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return (randn((m, k), dtype, device, generator), randn((k, n), dtype, device, generator),
            randn((n,), dtype, device, generator))


class MLP(torch.nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


def mlp(shape, dtype):
    return MLP(shape["D"], 4 * shape["D"])


def mlp_inputs(shape, dtype, device, generator):
    return (randn((shape["T"], shape["D"]), dtype, device, generator),)


def breaks(x):
    if x.sum() > 0:  # data-dependent control flow: a graph break
        return x * 2
    return x


def hangs_inputs(shape, dtype, device, generator):
    while True:
        time.sleep(1)


def crashes_inputs(shape, dtype, device, generator):
    os._exit(7)


def activation_quarter(x, bias):
    """``activation`` with another constant: what a changed model (or another torch's codegen) looks like."""
    return torch.clamp(F.gelu(x + bias) * 0.25, -1.0, 1.0)
