"""Does running a torch.compile baseline change the binaries Triton's JIT builds later in the same process?

Launches a matmul config through Triton's JIT (its cubin hashed), runs the fused-activation torch.compile
baseline, launches another matmul config, and compares both cubins with fresh compiles of the same configs
in clean processes (benchmarks/investigations/determinism_probe.py).
"""

import hashlib
import os
import subprocess
import sys

import torch

from harness.intake import loader

mm = loader.load(loader.resolve("matmul", None))
fa = loader.load(loader.resolve("fused_activation", None))
SHAPE = {"M": 1024, "N": 1024, "K": 1024}
CFGS = [
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
]
gen = torch.Generator(device="cuda").manual_seed(0)
inputs = mm.make_inputs(SHAPE, "fp16", "cuda", gen)


def launched(cfg):
    before = {id(k) for k in mm.fn.device_caches[0][0].values()} if mm.fn.device_caches else set()
    mm.launch(inputs, SHAPE, cfg)
    torch.cuda.synchronize()
    new = [k for k in mm.fn.device_caches[0][0].values() if id(k) not in before]
    return new[0].hash[:16], hashlib.sha256(new[0].asm["cubin"]).hexdigest()[:16]


def fresh(cfg):
    out = subprocess.run(
        [
            sys.executable,
            "benchmarks/investigations/determinism_probe.py",
            "child",
            "matmul",
            repr(SHAPE),
            repr(cfg),
            "plain",
            "fp16",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, TRITON_CACHE_DIR=f"/tmp/inductor-probe-{CFGS.index(cfg)}"),
    )
    return out.stdout.split()[1:3]


print("before torch.compile:", launched(CFGS[0]), "fresh", fresh(CFGS[0]))
env_before = dict(os.environ)
x = fa.make_inputs({"M": 1024, "N": 1024}, "bf16", "cuda", gen)
fa.baselines["torch.compile"](x, {"M": 1024, "N": 1024})
torch.cuda.synchronize()
print("inductor imported:", "torch._inductor" in sys.modules)
print(
    "environment changed:",
    {
        k: (env_before.get(k), os.environ.get(k))
        for k in set(env_before) | set(os.environ)
        if env_before.get(k) != os.environ.get(k)
    },
)
print("after torch.compile:", launched(CFGS[1]), "fresh", fresh(CFGS[1]))
from triton import knobs  # noqa: E402 - imported after torch.compile on purpose

print("cache dir", knobs.cache.dir, os.environ.get("TRITON_CACHE_DIR"))
