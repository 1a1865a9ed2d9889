"""Is one compile request (one Triton cache key) always the same binary on this host?

Compiles the same flash-attention config in fresh processes, each with its own empty Triton cache: plain,
after importing torch, after initialising CUDA, and through a real JIT launch. Prints key and cubin hash.
"""

import hashlib
import os
import subprocess
import sys
import tempfile

MODES = ["plain", "torch", "cuda", "jit"]


def child(mode: str) -> None:
    import triton

    from harness.compiling import launchspec
    from harness.intake import loader
    from harness.support import tritoncompat

    if mode in ("torch", "cuda", "jit"):
        import torch

        if mode != "torch":
            torch.cuda.init()
            torch.empty(1, device="cuda")
    spec = loader.load(loader.resolve(sys.argv[2], None))
    shape = spec.normalize_shape(eval(sys.argv[3]))
    cfg = eval(sys.argv[4])
    meta, opts = spec.split_config(cfg)
    dtype = sys.argv[6] if len(sys.argv) > 6 else "fp16"
    if mode == "jit":
        gen = torch.Generator(device="cuda").manual_seed(0)
        inputs = spec.make_inputs(shape, dtype, "cuda", gen)
        spec.launch(inputs, shape, cfg)
        torch.cuda.synchronize()
        kernel = next(iter(spec.fn.device_caches[0][0].values()))
    else:
        be = launchspec.backend_for("cuda", "sm_90", 32)
        ls = launchspec.for_case(spec, shape, dtype, meta, opts, be)
        kernel = triton.compile(
            launchspec.ast_source(spec.fn, ls), target=tritoncompat.gpu_target("cuda", "sm_90", 32), options=ls.options
        )
    print(
        mode,
        kernel.hash[:16],
        hashlib.sha256(kernel.asm["cubin"]).hexdigest()[:16],
        hashlib.sha256(kernel.asm["ptx"].encode()).hexdigest()[:16],
        flush=True,
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[5])
    else:
        args = sys.argv[1:] or [
            "flash_attention",
            "{'B': 4, 'H': 16, 'N': 4096, 'D': 64, 'causal': True}",
            "{'BLOCK_M': 128, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 3}",
        ]
        for mode in MODES + MODES:
            env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp())
            subprocess.run([sys.executable, __file__, "child", *args, mode], env=env, check=False)
