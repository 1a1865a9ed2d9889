"""The static default run, cold then warm: what issue 24's CPU targets are measured with.

Runs ``harness run`` on a matrix (default ``matrices/smoke.yaml``) twice in fresh processes, first with empty Triton
and harness caches (temporary directories, so nothing of the user's caches is touched), then again with the caches
the first run filled. For each it prints the wall time of the command, the run's own breakdown line (case time of
builds and of the interpreter, GPU time, builds compiled or from Triton's cache) and the compile seconds per vendor
from the run's records. Run it on a quiet machine and say on how many cores:
``python3 benchmarks/static_run.py [MATRIX] [-k EXPR] [-n N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_run(matrix: str, out: Path, caches: Path, k: str | None, n: str) -> dict[str, object]:
    env = {
        **os.environ,
        "TRITON_CACHE_DIR": str(caches / "triton"),
        "HARNESS_CACHE_DIR": str(caches / "harness"),
        "PYTHONPATH": str(REPO),
    }
    argv = [sys.executable, "-m", "harness", "run", matrix, "--out", str(out), "--static-only", "-n", n]
    argv += ["-k", k] if k else []
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # 1: a config failed, which is a finding, not a failed benchmark
        raise SystemExit(f"harness run exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    breakdown = next((line for line in proc.stdout.splitlines() if " cases in " in line), "")
    per_vendor: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for record in json.loads((out / "results.json").read_text())["records"]:
        if record["mode"] == "compile":
            per_vendor[record["vendor"]] += record.get("compile_s") or 0.0
            counts[f"{record['vendor']} {record.get('compile_cache') or 'no build'}"] += 1
    return {"wall_s": round(wall, 1), "breakdown": breakdown, "compile_s": dict(per_vendor), "builds": dict(counts)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matrix", nargs="?", default=str(REPO / "matrices" / "smoke.yaml"))
    parser.add_argument("-k", default=None, help="select cases, as harness run -k")
    parser.add_argument("-n", default="auto", help="pytest-xdist workers, as harness run -n")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        root = Path(tmp)
        for label, out in (("cold", root / "cold"), ("warm", root / "warm")):
            got = one_run(args.matrix, out, root / "caches", args.k, args.n)
            compile_s = ", ".join(f"{v} {s:.1f} s" for v, s in sorted(got["compile_s"].items()))  # type: ignore[union-attr]
            print(f"{label}: {got['wall_s']} s wall on {os.cpu_count()} cores; compile CPU {compile_s or 'none'}")
            print(f"  {got['breakdown']}")
            print(f"  builds: {json.dumps(got['builds'], sort_keys=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
