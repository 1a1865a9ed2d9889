"""Which side is wrong when flash_attention disagrees with its reference on a GPU?

Compares the kernel, SDPA (fp32 and fp16) and plain fp32 attention against float64
attention on one (batch, head) slice. Run on a GPU host: ``PYTHONPATH=. python3 benchmarks/investigations/fa_diagnose.py``.
"""

import math

import torch

from harness.intake import loader

spec = loader.load(loader.resolve("flash_attention", None))
torch.backends.cuda.matmul.allow_tf32 = False
for shape in (
    {"B": 1, "H": 2, "N": 4096, "D": 64, "causal": False},
    {"B": 1, "H": 2, "N": 4096, "D": 64, "causal": True},
    {"B": 1, "H": 2, "N": 256, "D": 64, "causal": False},
):
    gen = torch.Generator().manual_seed(0)
    q, k, v = spec.make_inputs(shape, "fp16", "cuda", gen)
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(shape["D"])
    if shape["causal"]:
        s = s.masked_fill(torch.ones(shape["N"], shape["N"], dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    exact = torch.softmax(s, -1) @ v.double()
    cands = {
        "kernel": spec.launch((q, k, v), shape, {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}),
        "reference": spec.reference((q, k, v), shape),
        "sdpa fp32": torch.nn.functional.scaled_dot_product_attention(
            q.float(), k.float(), v.float(), is_causal=shape["causal"]
        ),
        "sdpa fp16": torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=shape["causal"]),
    }
    for name, out in cands.items():
        print(shape, f"{name:10s} max|err| vs fp64 = {float((out.double() - exact).abs().max()):.3e}")
