"""The harness's two timings against Triton's own benchmark functions, in one process, on a run's winners.

Usage (on the GPU host, after a run): ``python3 benchmarks/sustained_vs_do_bench.py RUN_DIR [kernel ...]
[--match TEXT ...] [--first TEXT ...] [--ways W,W] [--switch-ms 100,250] [--settle-ms 0,300] [--paired-only]
[--every-baseline] [--json PATH [--resume]] [--from-json PATH]``.

For every tuned case of the named kernels (default: every kernel the run tuned; ``--match`` keeps the cases whose
label holds one of the texts) the winner config and the case's first baseline (``torch.matmul`` for the GEMMs) are
timed on the same inputs four ways (``--every-baseline``: each baseline, a row each): ``sustained`` and ``isolated`` as the harness times them
(:mod:`harness.device.sustained`, :func:`harness.device.timing.bench`), ``triton.testing.do_bench`` and
``do_bench_cudagraph`` (median). Each case's figures are taken twice (the second time in reverse order) and the medians
of the two passes are printed as a markdown table; then each case's speed-up (baseline over winner) by both
methods, unpaired (each timed alone) and paired:

- the harness's paired figure is the winner and the baseline timed in the same interleaved rounds, as a run times
  them, once per ``--switch-ms`` value (the stretch run untimed after a switch between items);
- ``do_bench_cudagraph``'s paired figure is the median of three ratios, each of the two timed one right after the
  other (order swapped each time), once per ``--settle-ms`` value: each side first runs alone for that long.
  ``do_bench_cudagraph`` times 10 replays of about 20 ms right after its warm-up; at the H200's power cap the
  clock follows a switch between kernels 50-250 ms late (run CA), so without the settle the second of a pair is
  timed partly at the clock the first left. ``--settle-ms`` also runs each item alone that long before its four
  unpaired figures.

A case whose timing raises is a row that says so, not the end of the benchmark. Each case's figures are printed
(stderr) and written to ``--json`` as soon as they are taken, so a run cut short keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

import torch
import triton.testing

from harness.device import operations
from harness.device.sustained import Item, interleaved
from harness.device.timing import bench, settle
from harness.intake import loader
from harness.model.jobs import BaselinesJob
from harness.results.store import load_results

WAYS = ("sustained", "isolated", "do_bench", "do_bench_cudagraph")
MakeCall = Callable[[int], Callable[[], Any]]


def _four_ways(
    name: str, make_call: MakeCall, n_buffers: int, backwards: bool, settle_ms: float, wanted: list[str]
) -> dict[str, float]:
    """The ``wanted`` figures of one call (of the four); ``backwards`` takes them in the reverse order (the second
    pass), so that no method is always the one measured on the chip the previous method left hot."""
    call = make_call(0)
    ways = {
        "sustained": lambda: interleaved([Item(name, make_call, n_buffers)])[name].median_us,  # type: ignore[union-attr]
        "isolated": lambda: bench(make_call, n_buffers, operations._flusher(), settle_ms=50.0).median_us,
        "do_bench": lambda: 1000.0 * triton.testing.do_bench(call, return_mode="median"),
        "do_bench_cudagraph": lambda: 1000.0 * triton.testing.do_bench_cudagraph(call, return_mode="median"),
    }
    order = [k for k in ways if k in wanted][:: -1 if backwards else 1]
    found = {k: float("nan") for k in WAYS}
    if settle_ms > 0:
        settle([call], settle_ms)
    for k in order:
        try:
            found[k] = ways[k]()
        except Exception as exc:  # noqa: BLE001 - one method failing on one call is that row's finding
            print(f"  {name} {k}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr, flush=True)
            found[k] = float("nan")
    return found


def _paired_sustained(winner: MakeCall, baseline: MakeCall, n_buffers: int, switch_ms: float) -> float:
    """Baseline over winner, both in the same interleaved rounds (as a run times them)."""
    try:
        timed = interleaved([Item("w", winner, n_buffers), Item("b", baseline, n_buffers)], switch_ms=switch_ms)
        return timed["b"].median_us / timed["w"].median_us  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - a baseline that cannot be timed this way is the row's finding
        print(f"  paired sustained: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr, flush=True)
        return float("nan")


def _paired_graph(
    winner: Callable[[], Any], baseline: Callable[[], Any], settle_ms: float, alternations: int = 3
) -> float:
    """Baseline over winner by ``do_bench_cudagraph``: the median of ``alternations`` ratios, each of the two
    timed one right after the other (the order swapped each time), each side run alone ``settle_ms`` first. Run
    BV found two figures taken apart drifting by 6-9% at long GEMMs, the paired ratio by under 1%."""
    ratios = []
    for k in range(alternations):
        try:
            pair = [winner, baseline][:: 1 if k % 2 == 0 else -1]
            times = []
            for call in pair:
                if settle_ms > 0:
                    settle([call], settle_ms)
                times.append(triton.testing.do_bench_cudagraph(call, return_mode="median"))
            a, b = times
            ratios.append(b / a if k % 2 == 0 else a / b)
        except Exception as exc:  # noqa: BLE001
            print(f"  paired cudagraph: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr, flush=True)
    return statistics.median(ratios) if ratios else float("nan")


def _applied(r: Any, records: list[Any]) -> dict[str, Any]:
    """The config as the harness launches it: without the options this backend ignores (another vendor's: an AMD
    config of the kernel's space timed on the H200): its build's record names them, and a tune record too from 8625e73 on."""
    ignored = set(r.ignored_options)
    for b in records:
        if b.mode != "tune" and b.target == r.target and b.case_id == r.case_id and b.config_id == r.config_id:
            ignored |= set(b.ignored_options)
    return {k: v for k, v in r.config.items() if k not in ignored}


def _label(r: Any) -> str:
    """A tuned case as the tables, ``--match`` and ``--first`` name it."""
    return f"{r.kernel} {r.dtype} {r.shape_id}"


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("kernels", nargs="*")
    p.add_argument("--match", nargs="+", default=[], help="keep the cases whose label holds one of these texts")
    p.add_argument("--switch-ms", type=_floats, default=[100.0], help="the harness's paired rounds, once per value")
    p.add_argument("--settle-ms", type=_floats, default=[300.0], help="do_bench_cudagraph's pairs, once per value")
    p.add_argument("--first", nargs="+", default=[], help="time the cases whose label holds one of these first")
    p.add_argument("--paired-only", action="store_true", help="skip the unpaired figures")
    p.add_argument("--ways", default=",".join(WAYS), help=f"the unpaired figures to take, of {','.join(WAYS)}")
    p.add_argument("--json", type=Path, help="every figure, written after each case")
    p.add_argument("--from-json", type=Path, help="print the tables of a saved --json (a run cut short) and stop")
    p.add_argument("--resume", action="store_true", help="keep the cases --json already holds and time the rest")
    p.add_argument("--every-baseline", action="store_true", help="a row per baseline, not the first one only")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    a = _args(argv)
    if a.from_json:
        saved: dict[str, dict[str, Any]] = json.loads(a.from_json.read_text())
        kept = {k: row for k, row in saved.items() if row["winner_passes"] and row["baseline_passes"]}
        if kept:
            _print_absolute(kept)
        _print_speedups(saved, a.switch_ms, a.settle_ms)
        return 0
    run, records = load_results(a.run_dir)
    tunes = [r for r in records if r.mode == "tune" and r.status == "ok" and (not a.kernels or r.kernel in a.kernels)]
    tunes = [r for r in tunes if not a.match or any(m in _label(r) for m in a.match)]
    found: dict[str, dict[str, Any]] = {}  # label -> baseline name, unpaired passes, paired figures
    if a.resume and a.json and a.json.exists():  # a call cut short by its limit: the next one times the rest
        found = json.loads(a.json.read_text())
    settle_first = max(a.settle_ms)
    ways = a.ways.split(",")
    first = [r for r in tunes if any(m in _label(r) for m in a.first)]
    for r in first + [r for r in tunes if r not in first]:  # each case whole, so a run cut short keeps whole rows
        ref = loader.resolve(r.kernel, None)
        state = operations._case(BaselinesJob(ref=ref, dtype=r.dtype, shape=r.shape, seed=0))
        spec, rotated = state.spec, operations._rotated(state)
        config = _applied(r, records)
        win: MakeCall = lambda i, c=config: lambda: spec.run(rotated[i], r.shape, c)  # noqa: E731
        baselines = list(spec.baselines.items())[: None if a.every_baseline else 1]
        for n, (name, fn) in enumerate(baselines):  # the first baseline's row is the case's label, as before
            label = _label(r) if n == 0 else f"{_label(r)} vs {name}"
            if label in found:
                continue
            print(label, file=sys.stderr, flush=True)
            base: MakeCall = lambda i, fn=fn: lambda: fn(rotated[i], r.shape)  # noqa: E731
            row = found[label] = {"winner": r.config_id, "baseline": name, "winner_passes": [], "baseline_passes": []}
            for backwards in (False, True) if not a.paired_only else ():  # the second pass in reverse order
                items = [("w", win, "winner_passes"), ("b", base, "baseline_passes")]
                for who, call, key in items[:: -1 if backwards else 1]:
                    row[key].append(_four_ways(who, call, len(rotated), backwards, settle_first, ways))
            row["paired_sustained"] = {str(s): _paired_sustained(win, base, len(rotated), s) for s in a.switch_ms}
            row["paired_graph"] = {str(s): _paired_graph(win(0), base(0), s) for s in a.settle_ms}
            print(
                f"  {json.dumps({k: row[k] for k in ('paired_sustained', 'paired_graph')})}",
                file=sys.stderr,
                flush=True,
            )
            torch.cuda.synchronize()
            if a.json:
                a.json.write_text(json.dumps(found, indent=1))
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
          f"run {a.run_dir} ({(run.commit or '')[:10]}); --switch-ms {a.switch_ms} --settle-ms {a.settle_ms}")  # fmt: skip
    if not a.paired_only:
        _print_absolute(found)
    _print_speedups(found, a.switch_ms, a.settle_ms)
    return 0


def _medians(passes: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(p[k] for p in passes) for k in WAYS}


def _print_absolute(found: dict[str, dict[str, Any]]) -> None:
    print("| case | timed | sustained µs | isolated µs | do_bench µs | do_bench_cudagraph µs | sustained vs do_bench "
          "| sustained vs cudagraph | isolated vs cudagraph |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    close = 0
    for label, row in found.items():
        for what, key in ((f"winner {row['winner']}", "winner_passes"), (row["baseline"], "baseline_passes")):
            m = _medians(row[key])
            close += key == "winner_passes" and abs(m["sustained"] / m["do_bench_cudagraph"] - 1) <= 0.03
            print(f"| {label} | {what} | {m['sustained']:.1f} | {m['isolated']:.1f} | {m['do_bench']:.1f} | "
                  f"{m['do_bench_cudagraph']:.1f} | {_pct(m['sustained'], m['do_bench'])} | "
                  f"{_pct(m['sustained'], m['do_bench_cudagraph'])} | {_pct(m['isolated'], m['do_bench_cudagraph'])} |")  # fmt: skip
    print(f"\n{len(found)} cases: the winner's sustained within 3% of do_bench_cudagraph in {close}\n")


def _print_speedups(found: dict[str, dict[str, Any]], switch_ms: list[float], settle_ms: list[float]) -> None:
    """Speed-ups: unpaired by both methods (where taken), then every pairing of a switch and a settle value."""
    pairs = [(s, g) for s in switch_ms for g in settle_ms]
    head = ["case", "baseline", "unpaired, sustained", "unpaired, cudagraph", "difference"]
    head += [f"paired sustained ({s:g} ms)" for s in switch_ms] + [
        f"paired cudagraph (settle {g:g} ms)" for g in settle_ms
    ]
    head += [f"difference {s:g}/{g:g}" for s, g in pairs]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    close = {p: 0 for p in pairs}
    wide = {p: 0 for p in pairs}
    for label in sorted(found):
        row = found[label]
        cells = [label, row["baseline"]]
        if row["winner_passes"] and row["baseline_passes"]:
            w, b = _medians(row["winner_passes"]), _medians(row["baseline_passes"])
            ours, graph = b["sustained"] / w["sustained"], b["do_bench_cudagraph"] / w["do_bench_cudagraph"]
            cells += [f"{ours:.3f}x", f"{graph:.3f}x", _pct(ours, graph)]
        else:
            cells += ["", "", ""]
        sus, gra = row.get("paired_sustained", {}), row.get("paired_graph", {})
        cells += [f"{sus.get(str(s), float('nan')):.3f}x" for s in switch_ms]
        cells += [f"{gra.get(str(g), float('nan')):.3f}x" for g in settle_ms]
        for s, g in pairs:
            x, y = sus.get(str(s), float("nan")), gra.get(str(g), float("nan"))
            close[(s, g)] += abs(x / y - 1) <= 0.03
            wide[(s, g)] += abs(x / y - 1) > 0.05
            cells.append(_pct(x, y))
        print("| " + " | ".join(cells) + " |")
    for s, g in pairs:
        print(f"\n{len(found)} cases, switch {s:g} ms against settle {g:g} ms: paired speed-ups within 3% in "
              f"{close[(s, g)]}, apart by more than 5% in {wide[(s, g)]}")  # fmt: skip


def _pct(a: float, b: float) -> str:
    return f"{100 * (a / b - 1):+.1f}%"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
