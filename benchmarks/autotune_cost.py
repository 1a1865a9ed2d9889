"""Autotune cost: the harness's tuning against an exhaustive ``@triton.autotune`` over the same configs.

Both start cold (fresh Triton and harness caches) on matmul fp16 4096³, in separate processes:

- ``@triton.autotune`` over the matmul spec's configs (both vendors' spaces, CUDA options only), keyed on
  M, N, K: wall time of the first call (it compiles and benchmarks every config), and its pick.
- ``harness run`` on a one-case matrix for the local target with ``--retune``: wall time of the whole run
  (process and pytest start, parallel cross-compiles, static limit check, full-size correctness, timing,
  baselines, copy bandwidth, reports), and its winner. The run's own phase times split out the tuning
  (compiles + check and timing of every candidate), the part that does ``@triton.autotune``'s job.

Both winners are then compared by the harness's own measurement of every config in that run.
Run on a GPU host: ``PYTHONPATH=. python3 benchmarks/autotune_cost.py [OUT_DIR]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHAPE_YAML = "{M: 4096, N: 4096, K: 4096}"

AUTOTUNE_CHILD = r"""
import json, sys, time
import torch, triton
sys.path.insert(0, sys.argv[1])
from harness.intake import loader
spec = loader.load(loader.resolve("matmul", None))
configs = []
for cfg in list(spec.nvidia_configs) + list(spec.amd_configs):
    meta, opts = spec.split_config(dict(cfg))
    configs.append(triton.Config(meta, num_warps=opts.get("num_warps", 4), num_stages=opts.get("num_stages", 2)))
tuned = triton.autotune(configs=configs, key=["M", "N", "K"])(spec.fn)
M = N = K = 4096
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
torch.cuda.synchronize()
start = time.perf_counter()
tuned[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
torch.cuda.synchronize()
wall = time.perf_counter() - start
best = tuned.best_config
print(json.dumps({"wall_s": wall, "configs": len(configs),
                  "best": {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages}}))
"""


def _fresh_env(tmp: Path, name: str) -> dict[str, str]:
    env = dict(os.environ)
    env["TRITON_CACHE_DIR"] = str(tmp / f"{name}-triton-cache")
    env["HARNESS_CACHE_DIR"] = str(tmp / f"{name}-harness-cache")
    env["PYTHONPATH"] = str(REPO)
    return env


def main() -> int:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="autotune-cost-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="autotune-cost-work-"))
    child = subprocess.run(
        [sys.executable, "-c", AUTOTUNE_CHILD, str(REPO)],
        capture_output=True,
        text=True,
        env=_fresh_env(tmp, "autotune"),
        timeout=900,
    )
    if child.returncode != 0:
        print(child.stderr[-3000:])
        return 1
    auto = json.loads(child.stdout.strip().splitlines()[-1])

    from harness.device.detection import local_gpus

    arch = local_gpus()[0].arch
    target = {
        "sm_90": "h200",
        "sm_80": "a100",
        "sm_100": "b200",
        "gfx942": "mi300x",
        "gfx90a": "mi250x",
        "gfx950": "mi355x",
    }[arch]
    matrix = tmp / "autotune_cost.yaml"
    matrix.write_text(
        f"name: autotune-cost\ntargets: [{target}]\nkernels:\n  matmul:\n    dtypes: [fp16]\n"
        f"    shapes: [{SHAPE_YAML}]\n    interpret: false\n"
    )
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(matrix), "--retune", "-n", "0", "--out", str(tmp / "run")],
        capture_output=True,
        text=True,
        env=_fresh_env(tmp, "harness"),
        cwd=REPO,
        timeout=900,
    )
    harness_wall = time.perf_counter() - start
    if run.returncode != 0:
        print(run.stdout[-3000:], run.stderr[-3000:])
        return 1
    records = json.loads((tmp / "run" / "results.json").read_text())["records"]
    timed = {
        json.dumps(
            {
                k: v
                for k, v in r["config"].items()
                if k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")
            },
            sort_keys=True,
        ): r["runtime"]["timing"]["median_us"]
        for r in records
        if r["mode"] == "compile" and (r.get("runtime") or {}).get("status") == "ok"
    }
    tune = next(r for r in records if r["mode"] == "tune")
    harness_best = tune["runtime"]["median_us"]
    auto_key = json.dumps(auto["best"], sort_keys=True)
    auto_best = timed.get(auto_key)
    (out_dir / "autotune_harness_results.json").write_text((tmp / "run" / "results.json").read_text())
    phases = tune["runtime"].get("phases_s", {})
    # the first launch of each config on the device: JIT cache lookup, module load, launcher
    phases["first_launches_total"] = round(
        sum((r.get("runtime") or {}).get("first_launch_s") or 0.0 for r in records if r["mode"] == "compile"), 3
    )
    # the tuning itself: parallel compiles (with resource reports), then check + time every candidate
    tuning_s = phases.get("compile", float("nan")) + phases.get("configs", float("nan"))
    result = {
        "autotune_wall_s": auto["wall_s"],
        "harness_wall_s": harness_wall,
        "configs": auto["configs"],
        "harness_phases_s": phases,
        "harness_tuning_s": tuning_s,
        "tuning_ratio": tuning_s / auto["wall_s"],
        "autotune_pick": auto["best"],
        "harness_pick": tune["config"],
        "harness_pick_us": harness_best,
        "autotune_pick_us_by_harness": auto_best,
        "winner_ratio": (harness_best / auto_best) if auto_best else None,
        "wall_ratio": harness_wall / auto["wall_s"],
    }
    (out_dir / "autotune_cost.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
