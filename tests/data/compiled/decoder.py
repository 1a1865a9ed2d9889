"""A decoder block as model teams write it (RMSNorm, causal SDPA, SwiGLU) with its cross-entropy loss, a 2-layer
``transformers`` Llama, and a SwiGLU whose Inductor kernel is planted wrong for wide blocks only
(tests/test_real_shape_checks.py): every config is checked at these real shapes without a GPU."""
import re

import torch
import torch.nn.functional as F
from harness.torchutil import randn


class Decoder(torch.nn.Module):
    def __init__(self, d, heads, hidden, vocab):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.RMSNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.proj = torch.nn.Linear(d, d, bias=False)
        self.norm2 = torch.nn.RMSNorm(d)
        self.gate_up = torch.nn.Linear(d, 2 * hidden, bias=False)
        self.down = torch.nn.Linear(hidden, d, bias=False)
        self.norm_f = torch.nn.RMSNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, x, target):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        x = x + self.down(F.silu(gate) * up)
        logits = self.head(self.norm_f(x))
        return F.cross_entropy(logits.view(b * t, -1).float(), target.view(-1))


def decoder(shape, dtype):
    return Decoder(shape["D"], shape["H"], shape["F"], shape["V"])


def decoder_inputs(shape, dtype, device, generator):
    x = randn((shape["B"], shape["T"], shape["D"]), dtype, device, generator)
    target = torch.randint(0, shape["V"], (shape["B"], shape["T"]), generator=generator, device=generator.device)
    return x, target.to(device)


class Llama(torch.nn.Module):
    """``transformers``' Llama model at a small config with two layers, random weights (nothing downloaded)."""

    def __init__(self, d, heads, kv_heads, vocab):
        super().__init__()
        from transformers import LlamaConfig, LlamaModel

        config = LlamaConfig(hidden_size=d, intermediate_size=4 * d, num_attention_heads=heads,
                             num_key_value_heads=kv_heads, num_hidden_layers=2, vocab_size=vocab,
                             max_position_embeddings=4096)  # fmt: skip
        config._attn_implementation = "sdpa"
        self.model = LlamaModel(config)

    def forward(self, ids):
        return self.model(input_ids=ids, use_cache=False).last_hidden_state


def llama(shape, dtype):
    return Llama(shape["D"], shape["H"], shape["KV"], shape["V"])


def ids_inputs(shape, dtype, device, generator):
    ids = torch.randint(0, shape["V"], (shape["B"], shape["T"]), generator=generator, device=generator.device)
    return (ids.to(device),)


def swiglu(x):
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


#: the store of Inductor's SwiGLU kernel (its size needs no mask), and the planted mask: the last element is left
#: out whenever XBLOCK is over 1,024 (MI300X's pointwise configs reach 8,192 at this size, H100's stop at 1,024)
STORE = re.compile(r"(tl\.store\(out_ptr0 \+ \(\w+\), \w+), None\)")
WRONG = r"\1, xindex < (xnumel - (XBLOCK > 1024)))"


def planted_inputs(shape, dtype, device, generator):
    """The SwiGLU's input, with Inductor's kernel source rewritten as it is compiled: its store is masked wrongly
    for wide blocks only (a config-dependent bug that only the configs of one face reach)."""
    from torch._inductor import async_compile

    original = async_compile.AsyncCompile.triton
    if not getattr(original, "planted", False):

        def triton(self, kernel_name, source_code, *args, **kwargs):
            if "silu" in source_code:
                source_code = STORE.sub(WRONG, source_code)
            return original(self, kernel_name, source_code, *args, **kwargs)

        triton.planted = True
        async_compile.AsyncCompile.triton = triton
    return (randn((shape["M"], 2 * shape["N"]), dtype, device, generator),)
