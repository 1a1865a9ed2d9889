"""cross_entropy: fused forward and backward of the softmax cross-entropy loss, gradient written in place.

As LLM training code does it for large vocabularies: the logits ``X [M, V]`` are the
biggest tensor of the step, so the kernel writes ``dL/dX = (softmax(X) - onehot(y)) * grad_scale``
over ``X`` itself instead of allocating a second one, and writes the per-row loss
``logsumexp(X) - X[y]`` beside it (``grad_scale`` is the upstream gradient of each row's loss:
1 for a summed loss, as checked here; 1/tokens for a mean). One program per row, two passes over the
row in BLOCK_V chunks: an online max / sum, then the gradient. Rows whose target is
``IGNORE`` (-100) get zero loss and zero gradient.

What it exercises in the harness: an argument that is both input and output (``inplace``:
the reference is computed from a copy taken before the kernel runs, and the logits are
restored before every check and every timed sample, outside the timed region), and two
outputs of different dtypes (the fp32 loss, the gradient in the logits' dtype).
"""

from __future__ import annotations

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar
from harness.torchutil import element_size, randn

IGNORE = -100
GRAD_SCALE = 1.0  # a summed loss: gradients in [-1, 1], checkable with absolute tolerances


@triton.jit
def cross_entropy_kernel(x_ptr, target_ptr, loss_ptr, V, grad_scale, IGNORE_INDEX: tl.constexpr, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * V
    target = tl.load(target_ptr + row)
    m = -float("inf")
    s = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)
    valid = target != IGNORE_INDEX
    x_t = tl.load(x_row + tl.where(valid, target, 0)).to(tl.float32)
    tl.store(loss_ptr + row, tl.where(valid, lse - x_t, 0.0))
    scale = tl.where(valid, grad_scale, 0.0)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(x_row + cols, mask=cols < V, other=0.0).to(tl.float32)
        grad = (tl.exp(x - lse) - tl.where(cols == target, 1.0, 0.0)) * scale
        tl.store(x_row + cols, grad.to(x_ptr.dtype.element_ty), mask=cols < V)


def runtime_args(shape, dtype):
    return {
        "x_ptr": Pointer(dtype, shape["M"] * shape["V"]),
        "target_ptr": Pointer("i64", shape["M"]),
        "loss_ptr": Pointer("fp32", shape["M"]),
        "V": Scalar("i32", shape["V"]),
        "grad_scale": Scalar("fp32", GRAD_SCALE),
    }


def fixed_constexprs(shape, dtype):
    return {"IGNORE_INDEX": IGNORE}


def grid(shape, config):
    return (shape["M"],)


def make_inputs(shape, dtype, device, generator):
    import torch

    x = randn((shape["M"], shape["V"]), dtype, device, generator, scale=2.0)
    target = torch.randint(0, shape["V"], (shape["M"],), generator=generator, device=generator.device)
    target[::7] = IGNORE  # some padding positions, as a batch of sequences has
    return (x, target.to(device))


def launch(inputs, shape, config, out=None):
    import torch

    x, target = inputs
    loss = out["loss"] if out is not None else torch.empty(shape["M"], device=x.device, dtype=torch.float32)
    cross_entropy_kernel[grid(shape, config)](x, target, loss, shape["V"], GRAD_SCALE, IGNORE_INDEX=IGNORE, **config)
    return {"loss": loss, "grad": x}


def _torch_loss_and_grad(x, target):
    import torch

    logits = x.detach().float().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(logits, target, reduction="none", ignore_index=IGNORE)
    (loss.sum() * GRAD_SCALE).backward()
    return {"loss": loss.detach(), "grad": logits.grad.to(x.dtype)}


def reference(inputs, shape):
    x, target = inputs
    return _torch_loss_and_grad(x, target)


def torch_eager(inputs, shape):
    """torch's cross_entropy forward and autograd backward in the logits' dtype (what a training step runs)."""
    import torch

    x, target = inputs
    logits = x.detach().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(logits, target, reduction="none", ignore_index=IGNORE)
    (loss.sum() * GRAD_SCALE).backward()
    return {"loss": loss.detach().float(), "grad": logits.grad}


SPEC = KernelSpec(
    name="cross_entropy",
    fn=cross_entropy_kernel,
    dims=("M", "V"),
    dtypes=("fp16", "bf16", "fp32"),
    tunables=("BLOCK_V",),
    runtime_args=runtime_args,
    fixed_constexprs=fixed_constexprs,
    grid=grid,
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    outputs=("loss", "grad"),
    output_tolerances={"loss": (1e-4, 1e-4)},  # fp32 on both sides whatever the logits' dtype
    inplace=(0,),
    # exp per element in each pass; the least traffic is the logits read once and the gradient written once
    # (the second pass re-reads a row the first just read, from L2 when it fits), plus target and loss
    flops=lambda shape, dtype: 8.0 * shape["M"] * shape["V"],
    min_bytes=lambda shape, dtype: 2.0 * shape["M"] * shape["V"] * element_size(dtype) + 12.0 * shape["M"],
    nvidia_configs=(
        {"BLOCK_V": 2048, "num_warps": 8, "num_stages": 1},
        {"BLOCK_V": 4096, "num_warps": 8, "num_stages": 1},
        {"BLOCK_V": 8192, "num_warps": 16, "num_stages": 1},
        {"BLOCK_V": 4096, "num_warps": 16, "num_stages": 2},
    ),
    amd_configs=(
        {"BLOCK_V": 2048, "num_warps": 8, "num_stages": 1, "waves_per_eu": 0},
        {"BLOCK_V": 4096, "num_warps": 8, "num_stages": 1, "waves_per_eu": 0},
        {"BLOCK_V": 8192, "num_warps": 16, "num_stages": 1, "waves_per_eu": 0},
    ),
    baselines={"torch cross_entropy + backward": torch_eager},
    interpret_shapes=({"M": 9, "V": 5000}, {"M": 4, "V": 130}),
    # the gradient: probabilities near 1/V need a small absolute tolerance to be checked at all
    tolerances={"fp16": (2e-6, 1e-2), "bf16": (2e-6, 2e-2), "fp32": (1e-7, 1e-5)},
)
