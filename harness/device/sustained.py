"""The ``sustained`` timing: launches back to back, several items timed in interleaved rounds.

Each item (a finalist config, a baseline) becomes a *batch*: ``L`` launches cycling over input
copies larger than the last-level cache, captured in one CUDA/HIP graph so no host gap falls
between them (eager back to back, marked ``graph: false`` with the reason, where capture fails —
a baseline that synchronises, an op graphs refuse). A sample is one batch between two events,
divided by ``L``; ``L`` is chosen so a batch lasts about ``BATCH_MS``.

After about ``HEAT_MS`` of all the batches back to back (the clocks and power then sit where a
steady stream of work holds them: on the H200 a 4096³ GEMM runs 8–14% slower there than in a
short burst, docs/performance.md), the items are timed in ``ROUNDS`` rounds with no
synchronisation between them, in snake order (forwards, then backwards: an item that ends a round begins the
next, so a round has one switch between items fewer). After each switch to another item, the batches of the
first ``SWITCH_MS`` are run and not timed; after the same item, one batch. Run CA in docs/performance.md
measured why: at the H200's power cap a kernel's SM clock is its own (our flash attention ran near 1,830 MHz,
cuDNN's SDPA near 1,530 MHz at the same ~690 W), and the clock follows a switch 50–100 ms late, so a batch
timed right after a switch runs at the clock the previous item left (SDPA 12% faster after ours, ours 18%
slower after SDPA). Their per-round medians give a ratio with its own
spread: the winner and the baseline share every round's temperature, so their ratio
carries the noise of one run, and two runs' ratios can be compared against it; each is timed at its own clock.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from harness.device.clocks import ClockTrace
from harness.device.clocks import per_item as item_clocks
from harness.device.timing import events, settle, summarize
from harness.model.runtime import Timing
from harness.support import torchcompat

ROUNDS = 5  # interleaved rounds: the ratio of two items has this many paired estimates
PER_ROUND = 3  # timed batches per item per round (after the discarded ones)
SWITCH_MS = 100.0  # run and not timed after a switch to another item: the clock's lag, measured in run CA
BATCH_MS = 2.0  # a batch's target duration
MAX_LAUNCHES = 512  # per batch (short kernels: ~4 us each fills 2 ms)
HEAT_MS = 200.0  # continuous load before the first timed batch (about what do_bench_cudagraph runs)


@dataclass(frozen=True)
class Item:
    """One thing to time: ``make_call(i)`` launches it on rotated input copy ``i``."""

    name: str
    make_call: Callable[[int], Callable[[], Any]]
    n_buffers: int


@dataclass
class _Batch:
    run: Callable[[], Any]
    launches: int
    graph: bool
    note: str
    probe_ms: float  # one launch, timed alone when the batch was sized


def _discarded(batch: _Batch, switch_ms: float, switched: bool) -> int:
    """Batches run and not timed before an item's samples in a round: after a switch from another item, as many
    as last ``switch_ms`` (at least one); after the same item, one."""
    if not switched or switch_ms <= 0:
        return 1
    return max(1, math.ceil(switch_ms / max(batch.launches * batch.probe_ms, 1e-3)))


def _launches(one_ms: float, n_buffers: int) -> int:
    wanted = max(1, min(MAX_LAUNCHES, round(BATCH_MS / max(one_ms, 1e-4))))
    if wanted >= n_buffers:  # whole turns over the input copies, so every copy is read equally often
        wanted = max(n_buffers, (wanted // n_buffers) * n_buffers)
    return wanted


def _capture(calls: list[Callable[[], Any]], launches: int, probe_ms: float) -> _Batch:
    """A graph of ``launches`` launches; eager back to back (with the reason) where capture fails."""
    import torch

    n = len(calls)
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # the libraries' lazy set-up (cuBLAS workspaces) happens outside capture
            for c in calls:
                c()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for j in range(launches):
                calls[j % n]()
        torch.cuda.synchronize()
        return _Batch(graph.replay, launches, True, "", probe_ms)
    except Exception as exc:  # noqa: BLE001 - the item is then timed eagerly, and says why
        torch.cuda.synchronize()
        note = f"not graph-captured ({type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''})"

        def eager() -> None:
            for j in range(launches):
                calls[j % n]()

        return _Batch(eager, launches, False, note, probe_ms)


def interleaved(
    items: list[Item],
    settle_ms: float = 10.0,
    rounds: int = ROUNDS,
    per_round: int = PER_ROUND,
    switch_ms: float = SWITCH_MS,
) -> dict[str, Timing | str]:
    """The sustained timing of each item (or the error that stopped it), all timed in the same rounds;
    ``switch_ms`` is the stretch run and not timed after a switch between items (0: one batch, as before run CA)."""
    import torch

    from harness.device.timing import probe_ms

    batches: dict[str, _Batch] = {}
    failed: dict[str, str] = {}
    for item in items:
        try:
            calls = [item.make_call(i) for i in range(item.n_buffers)]
            settle(calls, settle_ms)
            one_ms = probe_ms(calls[0])
            batches[item.name] = _capture(calls, _launches(one_ms, item.n_buffers), one_ms)
        except Exception as exc:  # noqa: BLE001 - one item's failure is its own result
            failed[item.name] = f"{type(exc).__name__}: {str(exc)[:300]}"
    names = [i.name for i in items if i.name in batches]
    per_item = 2 * per_round * rounds
    marks = {name: events(per_item) for name in names}
    used = {name: 0 for name in names}
    pairs: dict[str, list[list[tuple[Any, Any]]]] = {name: [] for name in names}
    # One continuous stream of work from here to the end: the heat phase brings clocks and power to the level
    # they hold under steady load, and the rounds follow without a synchronisation (the GPU never idles, so
    # no sample starts on a boosting, cooled-down chip). Only graph replays are enqueued: the host runs ahead.
    trace = ClockTrace(_uuid())
    trace.start()
    torch.cuda.synchronize()
    anchor, anchor_host = torch.cuda.Event(enable_timing=True), time.perf_counter()
    anchor.record()  # on an idle GPU: reached at about anchor_host, so every event maps to host time
    torchcompat.gpu_sleep(int(2e9 * 200e-6))
    heated = 0.0
    while names and heated < HEAT_MS:
        for name in names:
            batches[name].run()
            heated += BATCH_MS
    previous = names[-1] if names else ""  # the heat phase ends with the last item's batch
    discarded = {name: 0 for name in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            batch, ev = batches[name], marks[name]
            for _ in range(_discarded(batch, switch_ms, name != previous)):
                batch.run()
                discarded[name] += 1
            previous = name
            taken = []
            for _ in range(per_round):
                start, end = ev[used[name]], ev[used[name] + 1]
                used[name] += 2
                start.record()
                batch.run()
                end.record()
                taken.append((start, end))
            pairs[name].append(taken)
    torch.cuda.synchronize()
    trace.stop()
    clocks = item_clocks(
        trace.samples, {n: [_host_span(anchor, anchor_host, s, e) for rnd in pairs[n] for s, e in rnd] for n in names}
    )
    out: dict[str, Timing | str] = dict(failed)
    for name in names:
        batch = batches[name]
        per_round_us = [[s.elapsed_time(e) * 1000.0 / batch.launches for s, e in rnd] for rnd in pairs[name]]
        samples = [x for rnd in per_round_us for x in rnd]
        out[name] = summarize(
            samples,
            "sustained",
            items[[i.name for i in items].index(name)].n_buffers,
            batch.graph,
            discarded[name],
            batch.launches,
            [statistics.median(rnd) for rnd in per_round_us],
            batch.note,
        )
        if name in clocks:
            c = clocks[name]
            out[name] = out[name].updated(sm_clock_mhz=c.sm_mhz, power_capped=c.power_capped)  # type: ignore[union-attr]
    return out


def _uuid() -> str | None:
    import torch

    return str(getattr(torch.cuda.get_device_properties(0), "uuid", "") or "") or None


def _host_span(anchor: Any, anchor_host: float, start: Any, end: Any) -> tuple[float, float]:
    """A batch's start and end events as host monotonic seconds, through the anchor event."""
    return anchor_host + anchor.elapsed_time(start) / 1000.0, anchor_host + anchor.elapsed_time(end) / 1000.0
