"""How fast this machine is right now at what the test suite spends its CPU on, to set beside a suite timing.

This machine kind's speed moves by a quarter within an evening (docs/performance.md, "Suite time": one commit's
suite took 447 s and then 565 s three hours later). A suite figure alone then cannot say whether a change or the
hour moved it. This probe does, in a few seconds, the two things the suite's CPU goes to (the 2026-12-06 compile log
and profiles): starting Python processes that import torch, and cold Triton compiles for an NVIDIA and an AMD
target. It prints their CPU-seconds (user + system of the children, as the suite's processes are) in one line;
run it just before and just after a timed ``.ci/run`` and quote it beside the figure.

``.venv/bin/python benchmarks/machine_speed.py [REPEATS]`` (default 3: the median of each part is printed).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile

IMPORT = "import torch, triton"  # what every worker and capture child imports first
#: one GEMM tile (what the suite compiles most) built cold for sm_90 and gfx942 through Triton's own compile (no GPU needed)
COMPILE = """
import time
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def mm(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))

sig = {"a": "*fp16", "b": "*fp16", "c": "*fp16", "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
start = time.process_time()
for target in (GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)):
    triton.compile(ASTSource(mm, sig, constexprs={"BM": 128, "BN": 128, "BK": 64}), target=target)
print(time.process_time() - start)  # this process's own CPU (ptxas, a child, is not in it)
"""


def _cpu_of(code: str, env: dict[str, str], folder: str) -> tuple[float, str]:
    """CPU-seconds (user + system, its children's too) of one fresh Python running ``code`` (from a file: Triton
    reads a JIT function's source from it), and what it printed."""
    script = os.path.join(folder, "probe.py")
    with open(script, "w") as f:
        f.write(code)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"machine_speed: the probe failed: {proc.stderr.strip().splitlines()[-1:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def main(repeats: int) -> None:
    imports, compiles = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="speed-") as cache:
            env = dict(os.environ, TRITON_CACHE_DIR=cache)  # cold: a fresh Triton cache each time
            imports.append(_cpu_of(IMPORT, env, cache)[0])
            compiles.append(float(_cpu_of(COMPILE, env, cache)[1].split()[-1]))  # the compiles' own CPU
    load = os.getloadavg()[0]
    print(
        f"machine speed: import torch+triton {statistics.median(imports):.2f} CPU-s, "
        f"two cold compiles {statistics.median(compiles):.2f} CPU-s (median of {repeats}; load {load:.2f})"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
