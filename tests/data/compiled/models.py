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


# Model code as teams compile it (issue 69): losses over large vocabularies, logsumexp, a pre-norm transformer block
# with causal SDPA, and flex attention with a causal mask_mod and a score_mod. Each has an Inductor pass that computes
# on the device itself (uniform-value constant folding, flex attention's mask and score graphs).


def cross_entropy(logits, target):
    return F.cross_entropy(logits.float(), target)


def cross_entropy_inputs(shape, dtype, device, generator):
    target = torch.randint(0, shape["V"], (shape["T"],), generator=generator).to(device)
    return (randn((shape["T"], shape["V"]), dtype, device, generator), target)


def logsumexp(x):
    return torch.logsumexp(x.float(), dim=-1)


class Block(torch.nn.Module):
    """A pre-norm transformer block: attention through causal ``scaled_dot_product_attention``, then an MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def block(shape, dtype):
    return Block(shape["D"], shape["H"])


def block_inputs(shape, dtype, device, generator):
    return (randn((shape["B"], shape["T"], shape["D"]), dtype, device, generator),)


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def softcap(score, b, h, q_idx, kv_idx):
    return 30.0 * torch.tanh(score / 30.0)


def flex(q, k, v):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    mask = create_block_mask(causal_mask, None, None, q.shape[2], k.shape[2], device=q.device)
    return flex_attention(q, k, v, block_mask=mask, score_mod=softcap)


def flex_inputs(shape, dtype, device, generator):
    size = (shape["B"], shape["H"], shape["T"], shape["E"])
    return tuple(randn(size, dtype, device, generator) for _ in range(3))


def planted_pass_failure_inputs(shape, dtype, device, generator):
    """One of Inductor's passes made to fail deep inside the backend compiler (a stand-in for a pass that breaks on
    some model): the capture's one line must name this cause, not Dynamo's wrapper."""
    from torch._inductor.fx_passes import joint_graph

    original = joint_graph.constant_fold_uniform_value

    def broken(gm):
        joint_graph.constant_fold_uniform_value = original  # once: the child's later entries compile as before
        raise ValueError("a pass failed here (planted)")

    joint_graph.constant_fold_uniform_value = broken
    return one_input(shape, dtype, device, generator)


class LlamaLayer(torch.nn.Module):
    """One decoder layer of ``transformers``' Llama at a small config, random weights (nothing downloaded): its RMS
    norms, rotary embedding, grouped-query attention through SDPA and SwiGLU MLP, as the library writes them."""

    def __init__(self, d, heads, kv_heads):
        super().__init__()
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

        config = LlamaConfig(hidden_size=d, intermediate_size=4 * d, num_attention_heads=heads,
                             num_key_value_heads=kv_heads, num_hidden_layers=1, vocab_size=256,
                             max_position_embeddings=4096)  # fmt: skip
        config._attn_implementation = "sdpa"
        self.layer = LlamaDecoderLayer(config, layer_idx=0)
        self.rotary = LlamaRotaryEmbedding(config)

    def forward(self, x):
        positions = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
        out = self.layer(x, position_embeddings=self.rotary(x, positions), position_ids=positions)
        return out[0] if isinstance(out, tuple) else out


def llama_layer(shape, dtype):
    return LlamaLayer(shape["D"], shape["H"], shape["KV"])


class ConvBnRelu(torch.nn.Module):
    """A convolution, batch norm (eval) and ReLU: where cuDNN's channels-last preference and Inductor's layout
    optimisation (off on ROCm) decide whether layout kernels and a 2-D tiled epilogue appear."""

    def __init__(self, c, groups=1):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1, groups=groups)
        self.bn = torch.nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def conv_bn_relu(shape, dtype):
    return ConvBnRelu(shape["C"]).eval()


def depthwise_bn_relu(shape, dtype):
    """The same with a depthwise convolution (one group per channel): cuDNN's depthwise path on an H100."""
    return ConvBnRelu(shape["C"], groups=shape["C"]).eval()


def image_inputs(shape, dtype, device, generator):
    return (randn((shape["B"], shape["C"], shape["H"], shape["H"]), dtype, device, generator),)


def float64_inputs(shape, dtype, device, generator):
    """A careless inputs function: float64 whatever dtype it is asked for."""
    return (torch.randn((shape["M"], shape["N"]), dtype=torch.float64, device=device),
            torch.randn((shape["N"],), dtype=torch.float64, device=device))


# A mistake in the user's own code (tests/test_compiled_capture.py): said as the inputs function's, not the kernels'


def cuda_inputs(shape, dtype, device, generator):
    return (randn((shape["M"], shape["N"]), dtype, "cuda", generator),)  # the device it is given, ignored
