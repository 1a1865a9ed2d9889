"""The harness's two timings against Triton's own benchmark functions, in one process, on a run's winners.

Usage (on the GPU host, after a run): ``python3 benchmarks/sustained_vs_do_bench.py RUN_DIR [kernel ...]``.
For every tuned case of the named kernels (default: matmul, matmul_tma, flash_attention, softmax) the winner
config, and the case's first baseline (``torch.matmul`` for the GEMMs), are timed on the same inputs four ways:
``sustained`` and ``isolated`` as the harness times them (:mod:`harness.device.sustained`, :func:`harness.device.timing.bench`),
``triton.testing.do_bench`` and ``do_bench_cudagraph`` (median). The whole set is taken twice (the second time
in reverse order) and the medians of the two passes are printed as a markdown table, with sustained's difference from each of Triton's figures.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch
import triton.testing

from harness.device import operations
from harness.device.sustained import Item, interleaved
from harness.device.timing import bench
from harness.matrix import loader
from harness.model.jobs import BaselinesJob
from harness.results.store import load_results

KERNELS = ("matmul", "matmul_tma", "flash_attention", "softmax")


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
    return {k: ways[k]() for k in order}


def main(argv: list[str]) -> int:
    run, records = load_results(Path(argv[0]))
    kernels = tuple(argv[1:]) or KERNELS
    tunes = [r for r in records if r.mode == "tune" and r.status == "ok" and r.kernel in kernels]
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    for backwards in (False, True):  # two passes, the second in reverse order
        for r in tunes:
            ref = loader.resolve(r.kernel, None)
            state = operations._case(BaselinesJob(ref=ref, dtype=r.dtype, shape=r.shape, seed=0))
            spec, rotated = state.spec, operations._rotated(state)
            label = f"{r.kernel} {r.dtype} {r.shape_id}"
            rows.setdefault((label, f"winner {r.config_id}"), []).append(
                _four_ways(
                    "w", lambda i, c=dict(r.config): lambda: spec.run(rotated[i], r.shape, c), len(rotated), backwards
                )
            )
            name, fn = next(iter(spec.baselines.items()))
            rows.setdefault((label, name), []).append(
                _four_ways("b", lambda i, fn=fn: lambda: fn(rotated[i], r.shape), len(rotated), backwards)
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
    for (label, what), passes in rows.items():
        m = {k: statistics.median(p[k] for p in passes) for k in passes[0]}
        print(
            f"| {label} | {what} | {m['sustained']:.1f} | {m['isolated']:.1f} | {m['do_bench']:.1f} | "
            f"{m['do_bench_cudagraph']:.1f} | {100 * (m['sustained'] / m['do_bench'] - 1):+.1f}% | "
            f"{100 * (m['sustained'] / m['do_bench_cudagraph'] - 1):+.1f}% | "
            f"{100 * (m['isolated'] / m['do_bench_cudagraph'] - 1):+.1f}% |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
