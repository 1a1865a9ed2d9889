"""Where a torch.compile baseline's first call spends its time in a fresh GPU process (issue 59, item 2).

The nightly's fused-activation cases hold the GPU 14-17 s each for their baselines (run CA), two of which are
``torch.compile`` of the eager chain: Inductor traces, generates and compiles its Triton kernels on the first
call, under the GPU lock. This times that first call in fresh processes with empty Inductor and Triton caches,
as a cold night has them, with Inductor's default parallel compile and with ``TORCHINDUCTOR_COMPILE_THREADS=1``
(no pool of compile processes to start for a graph of one or two kernels), and a second call for contrast.

Usage (GPU host): ``PYTHONPATH=. python3 benchmarks/investigations/compile_baseline_cost.py [M N]``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
from kernels import fused_activation as fa
imported = time.perf_counter() - t0
torch.empty(1, device="cuda"); torch.cuda.synchronize()
M, N = int(sys.argv[1]), int(sys.argv[2])
x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
out = {"import_s": round(imported, 2)}
for name, fn in (("torch.compile", fa.compiled), ("torch.compile, same fitted Phi", fa.compiled_fitted)):
    for call in ("first", "second"):
        t = time.perf_counter(); fn((x, bias), {"M": M, "N": N}); torch.cuda.synchronize()
        out[f"{name} {call} call s"] = round(time.perf_counter() - t, 3)
print(json.dumps(out))
"""


def main(argv: list[str]) -> int:
    m, n = (argv + ["8192", "8192"])[:2]
    for label, extra in (("default", {}), ("compile_threads=1", {"TORCHINDUCTOR_COMPILE_THREADS": "1"})):
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                **os.environ,
                **extra,
                "TORCHINDUCTOR_CACHE_DIR": f"{tmp}/inductor",
                "TRITON_CACHE_DIR": f"{tmp}/triton",
            }
            proc = subprocess.run([sys.executable, "-c", CHILD, m, n], capture_output=True, text=True, env=env)
            got = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 else proc.stderr[-800:]
            print(f"{label} (M{m} N{n} bf16, empty caches): {got}", flush=True)
            if proc.returncode == 0:
                json.loads(got)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
