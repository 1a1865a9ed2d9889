"""The harness's two timings against Triton's own benchmark functions, in one process, on a run's winners.

Usage (on the GPU host, after a run): ``python3 benchmarks/sustained_vs_do_bench.py RUN_DIR [kernel ...]``.
For every tuned case of the named kernels (default: every kernel the run tuned) the winner
config, and the case's first baseline (``torch.matmul`` for the GEMMs), are timed on the same inputs four ways:
``sustained`` and ``isolated`` as the harness times them (:mod:`harness.device.sustained`, :func:`harness.device.timing.bench`),
``triton.testing.do_bench`` and ``do_bench_cudagraph`` (median). The whole set is taken twice (the second time
in reverse order) and the medians of the two passes are printed as a markdown table, with sustained's difference from each of Triton's figures; then each case's speed-up (baseline over winner) by the harness's sustained
method and by ``do_bench_cudagraph``, and how many cases agree within 3% on both. A case whose timing raises
(a baseline that cannot be captured in a CUDA graph, say) is a row that says so, not the end of the benchmark.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

import torch
import triton.testing

from harness.device import operations
from harness.device.sustained import Item, interleaved
from harness.device.timing import bench
from harness.matrix import loader
from harness.model.jobs import BaselinesJob
from harness.results.store import load_results

WAYS = ("sustained", "isolated", "do_bench", "do_bench_cudagraph")


def _four_ways(name: str, make_call, n_buffers: int, backwards: bool) -> dict[str, float]:
    """The four figures of one call; ``backwards`` takes them in the reverse order (the second pass), so that
    no method is always the one measured on the chip the previous method left hot."""
    call = make_call(0)
    ways = {
        "sustained": lambda: interleaved([Item(name, make_call, n_buffers)])[name].median_us,
        "isolated": lambda: bench(make_call, n_buffers, operations._flusher(), settle_ms=50.0).median_us,
        "do_bench": lambda: 1000.0 * triton.testing.do_bench(call, return_mode="median"),
        "do_bench_cudagraph": lambda: 1000.0 * triton.testing.do_bench_cudagraph(call, return_mode="median"),
    }
    order = list(ways)[::-1] if backwards else list(ways)
    found: dict[str, float] = {}
    for k in order:
        try:
            found[k] = ways[k]()
        except Exception as exc:  # noqa: BLE001 - one method failing on one call is that row's finding
            print(f"  {name} {k}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr, flush=True)
            found[k] = float("nan")
    return found


def _paired_speedups(winner: Any, baseline: Any, n_buffers: int, alternations: int = 3) -> tuple[float, float]:
    """The speed-up (baseline over winner) paired, by each method: the harness's own (winner and baseline in the
    same interleaved rounds, as a run times them) and ``do_bench_cudagraph``'s (the median of ``alternations``
    ratios, each of the two timed one right after the other, the order swapped each time). Run BV found the ratio of
    two ``do_bench_cudagraph`` figures taken apart drifting by 6-9% at long GEMMs, the paired one by under 1%."""
    try:
        timed = interleaved([Item("w", winner, n_buffers), Item("b", baseline, n_buffers)])
        ours = timed["b"].median_us / timed["w"].median_us  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - a baseline that cannot be timed this way is the row's finding
        print(f"  paired sustained: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr, flush=True)
        ours = float("nan")
    ratios = []
    for k in range(alternations):
        try:
            pair = [winner(0), baseline(0)][:: 1 if k % 2 == 0 else -1]
            a, b = (triton.testing.do_bench_cudagraph(call, return_mode="median") for call in pair)
            ratios.append(b / a if k % 2 == 0 else a / b)
        except Exception as exc:  # noqa: BLE001
            print(f"  paired cudagraph: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr, flush=True)
    return ours, statistics.median(ratios) if ratios else float("nan")


def _applied(r: Any, records: list[Any]) -> dict[str, Any]:
    """The config as the harness launches it: without the options this backend ignores (another vendor's: an AMD
    config of the kernel's space timed on the H200): its build's record names them, and a tune record too from 8625e73 on."""
    ignored = set(r.ignored_options)
    for b in records:
        if b.mode != "tune" and b.target == r.target and b.case_id == r.case_id and b.config_id == r.config_id:
            ignored |= set(b.ignored_options)
    return {k: v for k, v in r.config.items() if k not in ignored}


def main(argv: list[str]) -> int:
    run, records = load_results(Path(argv[0]))
    tunes = [r for r in records if r.mode == "tune" and r.status == "ok" and (not argv[1:] or r.kernel in argv[1:])]
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    paired: dict[str, tuple[float, float]] = {}
    for backwards in (False, True):  # two passes, the second in reverse order
        for r in tunes:
            ref = loader.resolve(r.kernel, None)
            state = operations._case(BaselinesJob(ref=ref, dtype=r.dtype, shape=r.shape, seed=0))
            spec, rotated = state.spec, operations._rotated(state)
            label = f"{r.kernel} {r.dtype} {r.shape_id}"
            config = _applied(r, records)
            print(f"{'pass 2' if backwards else 'pass 1'}: {label}", file=sys.stderr, flush=True)
            rows.setdefault((label, f"winner {r.config_id}"), []).append(
                _four_ways("w", lambda i, c=config: lambda: spec.run(rotated[i], r.shape, c), len(rotated), backwards)
            )
            name, fn = next(iter(spec.baselines.items()))
            rows.setdefault((label, name), []).append(
                _four_ways("b", lambda i, fn=fn: lambda: fn(rotated[i], r.shape), len(rotated), backwards)
            )
            if backwards:
                paired[label] = _paired_speedups(
                    lambda i, c=config: lambda: spec.run(rotated[i], r.shape, c),
                    lambda i, fn=fn: lambda: fn(rotated[i], r.shape),
                    len(rotated),
                )
            torch.cuda.synchronize()
    print(
        f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
        f"run {argv[0]} ({(run.commit or '')[:10]})"
    )
    print(
        "| case | timed | sustained µs | isolated µs | do_bench µs | do_bench_cudagraph µs | sustained vs do_bench "
        "| sustained vs cudagraph | isolated vs cudagraph |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    medians: dict[tuple[str, str], dict[str, float]] = {}
    for (label, what), passes in rows.items():
        m = medians[(label, what)] = {k: statistics.median(p[k] for p in passes) for k in WAYS}
        print(
            f"| {label} | {what} | {m['sustained']:.1f} | {m['isolated']:.1f} | {m['do_bench']:.1f} | "
            f"{m['do_bench_cudagraph']:.1f} | {_pct(m['sustained'], m['do_bench'])} | "
            f"{_pct(m['sustained'], m['do_bench_cudagraph'])} | {_pct(m['isolated'], m['do_bench_cudagraph'])} |"
        )
    print()
    print(
        "| case | baseline | speed-up, sustained | speed-up, do_bench_cudagraph | difference | paired, sustained "
        "| paired, do_bench_cudagraph | difference, paired |"
    )
    print("|---|---|---|---|---|---|---|---|")
    cases = {label for label, _ in medians}
    absolute = speedup = wide = paired_close = paired_wide = 0
    for label in sorted(cases):
        winner = next(m for (lb, w), m in medians.items() if lb == label and w.startswith("winner "))
        baseline = next(((w, m) for (lb, w), m in medians.items() if lb == label and not w.startswith("winner ")), None)
        if baseline is None:
            continue
        name, base = baseline
        ours = base["sustained"] / winner["sustained"]
        graph = base["do_bench_cudagraph"] / winner["do_bench_cudagraph"]
        p_ours, p_graph = paired.get(label, (float("nan"), float("nan")))
        absolute += abs(winner["sustained"] / winner["do_bench_cudagraph"] - 1) <= 0.03
        speedup += abs(ours / graph - 1) <= 0.03
        wide += abs(ours / graph - 1) > 0.05
        paired_close += abs(p_ours / p_graph - 1) <= 0.03
        paired_wide += abs(p_ours / p_graph - 1) > 0.05
        print(
            f"| {label} | {name} | {ours:.3f}x | {graph:.3f}x | {_pct(ours, graph)} | {p_ours:.3f}x | {p_graph:.3f}x "
            f"| {_pct(p_ours, p_graph)} |"
        )
    print(
        f"\n{len(cases)} cases: winner's sustained within 3% of do_bench_cudagraph in {absolute}, speed-up within 3% "
        f"in {speedup}, speed-up apart by more than 5% in {wide}; paired speed-ups within 3% in {paired_close}, "
        f"apart by more than 5% in {paired_wide}"
    )
    return 0


def _pct(a: float, b: float) -> str:
    return f"{100 * (a / b - 1):+.1f}%"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
