"""What a harness run costs: the static default run (cold, then warm) and the GPU nightly, with the phase breakdown.

``static`` (issue 24's CPU figures): ``harness run`` on a matrix (default ``matrices/smoke.yaml``) twice in fresh
processes, first with empty Triton and harness caches (temporary directories, so nothing of the user's caches is
touched), then again with the caches the first run filled. For each: the command's wall time, the run's own
breakdown lines and the compile seconds per vendor from its records. Run it on a quiet machine and say on how many
cores: ``python3 benchmarks/run_cost.py static [MATRIX] [-k EXPR] [-n N]``.

``nightly`` (the GPU figures): ``harness run`` on the nightly matrix with the local GPU's target, from an empty
harness cache and an empty Triton cache (``--triton-cache keep`` keeps the user's Triton cache: its figure then
says so). Prints the wall time, the run's breakdown and, from the tune records, per case the time holding the GPU
(configs, baselines, sustained rounds), the median, and in how many cases the baselines cost no more than the
configs: ``python3 benchmarks/run_cost.py nightly [MATRIX] --targets h200,mi300x -n 8``.

``breakdown RUN_DIR``: the same GPU figures of a run already made (``ci/gpu_nightly.sh``'s, say), per kernel, with
the baselines' time by step (summed over a case's baselines: first call, sync check, check, isolated timing,
kernel names), how long the GPU was held and idle between cases, and how many GPU workers a baseline retired.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def one_run(matrix: str, out: Path, env: dict[str, str], extra: list[str]) -> dict[str, Any]:
    """One ``harness run`` in a fresh process: wall time, its breakdown lines, its records."""
    argv = [sys.executable, "-m", "harness", "run", matrix, "--out", str(out), *extra]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **env, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # 1: a config failed, which is a finding, not a failed benchmark
        raise SystemExit(f"harness run exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    lines = proc.stdout.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("harness: ") and " cases in " in line), None)
    breakdown = [] if at is None else [lines[at]]  # the breakdown: its first line, then its GPU lines and wraps
    for line in lines[at + 1 :] if at is not None else []:
        if not line.startswith(("harness GPU", "  ")):
            break
        breakdown.append(line)
    records = json.loads((out / "results.json").read_text())["records"]
    return {"wall_s": round(wall, 1), "breakdown": breakdown, "records": records}


def compile_figures(records: list[dict[str, Any]]) -> tuple[dict[str, float], dict[str, int]]:
    """Compile seconds per vendor, and builds per vendor by how they were made (miss: compiled, hit: Triton's cache)."""
    per_vendor: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for record in records:
        if record["mode"] == "compile":
            per_vendor[record["vendor"]] += record.get("compile_s") or 0.0
            counts[f"{record['vendor']} {record.get('compile_cache') or 'no build'}"] += 1
    return dict(per_vendor), dict(counts)


def gpu_figures(records: list[dict[str, Any]]) -> list[str]:
    """Per tuned case, the time it held the GPU, from its tune record's phases."""
    rows = []
    for r in records:
        phases = ((r.get("runtime") or {}).get("phases_s")) if r["mode"] == "tune" else None
        if phases:
            c, b, s = (float(phases.get(k) or 0.0) for k in ("configs", "baselines", "sustained"))
            rows.append(
                (
                    r.get("case_id") or f"{r['kernel']} {r['dtype']} {r['shape']}",
                    c,
                    b,
                    s,
                    float(phases.get("gpu_lock_wait") or 0.0),
                )
            )
    if not rows:
        return ["no tuned case"]
    held = [c + b + s for _, c, b, s, _ in rows]
    out = [
        f"tuned cases: {len(rows)}; GPU held {sum(held):.1f} s in all; per case median {statistics.median(held):.2f} s "
        f"(configs {statistics.median(r[1] for r in rows):.2f}, baselines {statistics.median(r[2] for r in rows):.2f}, "
        f"sustained {statistics.median(r[3] for r in rows):.2f})",
        f"baselines <= configs in {sum(1 for r in rows if r[2] <= r[1])} of {len(rows)} cases "
        f"({100 * sum(1 for r in rows if r[2] <= r[1]) / len(rows):.0f}%)",
        "slowest cases (held s: configs + baselines + sustained):",
    ]
    for case_id, c, b, s, _ in sorted(rows, key=lambda r: -(r[1] + r[2] + r[3]))[:6]:
        out.append(f"  {c + b + s:6.2f} = {c:.2f} + {b:.2f} + {s:.2f}  {case_id}")
    return out


def static(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        root = Path(tmp)
        env = {
            "TRITON_CACHE_DIR": str(root / "caches" / "triton"),
            "HARNESS_CACHE_DIR": str(root / "caches" / "harness"),
            "HARNESS_RESULT_CACHE": "1",  # as a user's runs have it, whatever the calling shell says
        }
        extra = ["--static-only", "-n", args.n, *(["-k", args.k] if args.k else [])]
        for label in ("cold", "warm"):
            got = one_run(args.matrix, root / label, env, extra)
            per_vendor, counts = compile_figures(got["records"])
            compile_s = ", ".join(f"{v} {s:.1f} s" for v, s in sorted(per_vendor.items()))
            print(f"{label}: {got['wall_s']} s wall on {os.cpu_count()} cores; compile CPU {compile_s or 'none'}")
            for line in got["breakdown"]:
                print(f"  {line}")
            print(f"  builds: {json.dumps(counts, sort_keys=True)}")


def nightly(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        root = Path(tmp)
        env = {"HARNESS_CACHE_DIR": str(root / "harness-cache")}
        if args.triton_cache == "empty":
            env["TRITON_CACHE_DIR"] = str(root / "triton-cache")
        extra = ["--targets", args.targets, "-n", args.n, "--force", *(["-k", args.k] if args.k else [])]
        got = one_run(args.matrix, Path(args.out) if args.out else root / "run", env, extra)
        per_vendor, counts = compile_figures(got["records"])
        print(
            f"nightly: {got['wall_s']} s wall on {os.cpu_count()} cores, empty harness cache, "
            f"{'empty' if args.triton_cache == 'empty' else 'the kept'} Triton cache; builds {json.dumps(counts, sort_keys=True)}"
        )
        for line in [*got["breakdown"], *gpu_figures(got["records"])]:
            print(f"  {line}")


def breakdown(args: argparse.Namespace) -> None:
    records = json.loads((Path(args.run_dir) / "results.json").read_text())["records"]
    tunes = [r for r in records if r["mode"] == "tune" and (r.get("runtime") or {}).get("phases_s")]
    for line in gpu_figures(records):
        print(line)
    per_kernel: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    steps: dict[str, float] = defaultdict(float)
    config_steps: dict[str, float] = defaultdict(float)
    windows, retired = [], 0
    for r in tunes:
        rt = r["runtime"]
        p = rt["phases_s"]
        row = per_kernel[r["kernel"]]
        row[0] += 1
        for i, k in enumerate(("configs", "baselines", "sustained"), start=1):
            row[i] += float(p.get(k) or 0.0)
        for k, v in (p.get("baselines_detail") or {}).items():
            steps[k] += float(v)
        for k, v in (p.get("configs_detail") or {}).items():
            config_steps[k] += float(v)
        if rt.get("gpu_window"):
            windows.append(tuple(rt["gpu_window"]))
        retired += bool(rt.get("gpu_worker_retired"))
    print("| kernel | tuned cases | configs s | baselines s | sustained s |\n|---|---|---|---|---|")
    for kernel, (n, c, b, s_) in sorted(per_kernel.items(), key=lambda kv: -sum(kv[1][1:])):
        print(f"| {kernel} | {n:.0f} | {c:.1f} | {b:.1f} | {s_:.1f} |")
    for what, by_step in (("configs", config_steps), ("baselines", steps)):
        if by_step:
            ordered = sorted(by_step.items(), key=lambda kv: -kv[1])
            print(f"{what} by step (s): " + ", ".join(f"{k} {v:.1f}" for k, v in ordered))
    if windows:
        windows.sort()
        busy = sum(e - s for s, e in windows)
        gaps = [b[0] - a[1] for a, b in zip(windows, windows[1:]) if b[0] > a[1]]
        print(f"GPU held from first to last case {windows[-1][1] - windows[0][0]:.1f} s, busy {busy:.1f} s, "
              f"idle between cases {sum(gaps):.1f} s (longest {max(gaps, default=0.0):.1f} s); "
              f"GPU workers retired by a baseline: {retired}")  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("static", help="the static default run, cold then warm")
    s.add_argument("matrix", nargs="?", default=str(REPO / "matrices" / "smoke.yaml"))
    s.add_argument("-k", default=None, help="select cases, as harness run -k")
    s.add_argument("-n", default="auto", help="pytest-xdist workers, as harness run -n")
    g = sub.add_parser("nightly", help="the nightly matrix on the local GPU, from an empty harness cache")
    g.add_argument("matrix", nargs="?", default=str(REPO / "matrices" / "nightly.yaml"))
    g.add_argument("--targets", default="h200,mi300x")
    g.add_argument("-k", default=None)
    g.add_argument("-n", default="8")
    g.add_argument("--triton-cache", choices=("empty", "keep"), default="empty")
    g.add_argument("--out", default=None, help="keep the run directory here")
    b = sub.add_parser("breakdown", help="the GPU figures of a run already made")
    b.add_argument("run_dir")
    args = parser.parse_args(argv)
    {"static": static, "nightly": nightly, "breakdown": breakdown}[args.mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
