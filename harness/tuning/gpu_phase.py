"""The GPU phase of a case, driven through a GPU worker client (its lock and winner cache: :mod:`harness.tuning.winners`).

After the static compiles, a case whose target has the local GPU's arch is run
there: each config that passed the static limit check is launched, checked and
timed on its own (a failure is that config's result, never an infinity), the
winner is cached per (kernel, dtype, shape, arch, Triton, kernel source), the
baselines are timed, and the winners of the other targets are tried on this
device to price tuning portability. A file lock per GPU guarantees that no two
timings share a device, whatever the number of pytest workers.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Protocol

from harness.matrix.cases import Case
from harness.model.ids import config_key
from harness.model.jobs import BaselinesJob, GpuConfigJob, GpuJob, OnDevice, SustainedJob
from harness.model.records import Record
from harness.model.replies import BaselinesReply, ConfigReply, Reply, SustainedReply
from harness.model.runtime import GpuSlot, Phases, Runtime, not_launched
from harness.model.targets import Target, catalogue
from harness.tuning.launch_parity import launch_parity
from harness.tuning.tune_record import (
    best_per_space,
    figures,
    portability,
    rank,
    runtime_of,
    spaces,
    tune_record,
)
from harness.tuning.winners import (
    KnownWinner,
    StoredWinners,
    Winner,
    gpu_lock,
    known_winners,
    load_winner,
    save_winner,
    tuning_context,
    winner_key,
)


class GpuClient(Protocol):
    """What the phase needs of a GPU worker (:class:`harness.execution.pool.Worker` is one): a request answered
    within a limit, and retiring the process once the case is done with it."""

    def send(self, job: GpuJob, timeout: float) -> Reply: ...

    def retire(self) -> None: ...


def _applied(rec: Record) -> dict[str, Any]:
    return {k: v for k, v in rec.config.items() if k not in rec.ignored_options}


def _runtime(reply: Reply, spent: dict[str, float]) -> Runtime:
    """A config's reply as its runtime: the same figures under the same keys, the same objects (a failed request's
    traceback kept); where the request's seconds went is added to ``spent`` (the case's), not kept per config."""
    got = ConfigReply.of(reply)
    for step, seconds in (got.spent_s or {}).items():
        spent[step] = round(spent.get(step, 0.0) + seconds, 3)
    return got.without("spent_s").recast(Runtime)


def _config_job(case: BaselinesJob, rec: Record, stage: str) -> GpuConfigJob:
    """The request that checks and times one build's config on the device (``final``: timing only, so the build's
    cache key, which its check compares with the binary that launched, is not sent)."""
    on_device = {f.name: getattr(case, f.name) for f in dataclasses.fields(OnDevice)}
    key = (rec.cache_key or "") if stage != "final" else ""
    return GpuConfigJob(**on_device, config=_applied(rec), stage=stage, cache_key=key)


class _Found:
    """What the device found for each of a case's builds, as the phase learns it: the builds (frozen records) stay
    as the build stage made them; :meth:`record` gives a build with its runtime, a new record."""

    def __init__(self) -> None:
        self._by_build: dict[tuple[str, ...], Runtime] = {}  # by the build's merge key (Record.key)
        self.spent: dict[str, float] = {}  # the config requests' seconds by step, summed over the case

    def __getitem__(self, rec: Record) -> Runtime:
        found = self._by_build.get(rec.key(), rec.runtime)
        assert found is not None, f"{rec.config_id}: no runtime entry"
        return found

    def __setitem__(self, rec: Record, runtime: Runtime) -> None:
        self._by_build[rec.key()] = runtime

    def ok(self, rec: Record) -> bool:
        found = self._by_build.get(rec.key(), rec.runtime)
        return found is not None and found.ok

    def record(self, rec: Record) -> Record:
        return dataclasses.replace(rec, runtime=self._by_build.get(rec.key(), rec.runtime))


def run_case(
    case: Case,
    records: list[Record],
    worker: GpuClient,
    gpu: GpuSlot,
    other_targets: list[str],
    retune: bool = False,
    stored: StoredWinners | None = None,
) -> tuple[list[Record], Record]:
    """The GPU phase of one case: its compile records as the device found them (new records, each with its
    ``runtime``; the build stage's records are left as they are) and the case's ``tune`` record. ``stored``:
    other targets' winners from a stored run (:func:`stored_winners`), timed here for the portability column."""
    found = _Found()
    tune = _tune(case, records, worker, gpu, other_targets, retune, stored, found)
    return [found.record(r) for r in records], tune


def _tune(
    case: Case,
    records: list[Record],
    worker: GpuClient,
    gpu: GpuSlot,
    other_targets: list[str],
    retune: bool,
    stored: StoredWinners | None,
    found: _Found,
) -> Record:
    """Find each build's runtime (into ``found``); return the tune record."""
    target: Target = catalogue()[case.target]
    first = records[0]
    key = winner_key(case.kernel, case.dtype, case.shape, target, case.triton, first.kernel_hash)
    cached: Winner | None = None if retune else load_winner(key)
    base = BaselinesJob(
        ref=case.ref,
        dtype=case.dtype,
        shape=case.shape,
        seed=case.seed,
        cache_bytes=target.cache_bytes,
        target=case.target,
    )
    launchable = [r for r in records if r.status == "ok" and r.fits and not r.duplicate_of]
    for rec in records:
        if rec.duplicate_of and rec.status == "ok":
            found[rec] = not_launched(f"same binary as {rec.duplicate_of} (sha256, warps, shared bytes, CTAs and grid)")
        elif rec not in launchable:
            reason = (
                rec.error
                if rec.status != "ok"
                else "; ".join(f"{f.resource} {f.value:g} > {f.limit:g}" for f in rec.flags if f.severity == "error")
            )
            found[rec] = not_launched(f"failed the static check: {reason}")
    known = known_winners(case, other_targets, stored or {})
    to_run = launchable
    tuned_because = "" if cached or retune else "no cached winner"
    context = tuning_context(records, gpu)
    if cached and (stale := [k for k, v in context.items() if cached.context.get(k) != v]):
        # a winner chosen among other configs, under another torch or on another device model is no winner here
        cached, tuned_because = None, "cached winner stale: " + ", ".join(stale) + " changed"
    if cached:
        # re-time the cached winner, the other targets' known winners, and each space's best
        # from the tuning run, so the portability column survives winner reuse
        wanted = (
            {config_key(dict(cached.config))}
            | {config_key(dict(w.config)) for w in known.values() if w}
            | {config_key(dict(c)) for c in cached.space_best.values()}
        )
        to_run = [r for r in launchable if config_key(r.config) in wanted]
        if not any(config_key(r.config) == config_key(dict(cached.config)) for r in to_run):
            cached, to_run = None, launchable  # the cached winner left the config space: tune again
            tuned_because = "cached winner left the config space"
    waited = time.perf_counter()
    with gpu_lock(gpu):
        window_start = time.time()
        started = time.perf_counter()
        if cached:  # a handful of known configs: check and time each in full
            for rec in to_run:
                job = _config_job(base, rec, "full")
                found[rec] = launch_parity(rec, _runtime(worker.send(job, case.timeout_s), found.spent))
        else:
            _screen_then_time(worker, base, to_run, known, case.timeout_s, found)
        measured = [r for r in to_run if found.ok(r)]
        configs_done = time.perf_counter()
        baselines = BaselinesReply.of(worker.send(base, case.timeout_s * 4)) if measured else BaselinesReply()
        spent, retired = dict(baselines.spent_s or {}), ""
        baselines_done = time.perf_counter()
        if measured and baselines.status == "ok":
            rounds = _read_sustained(measured, known, found)
            baselines, more, retired = _time_sustained(worker, base, rounds, baselines, case.timeout_s, found)
            spent.update(more)
        tainted = baselines.tainted or baselines.retire_worker or ""
        if tainted and not retired:  # the sustained request did not retire the changed process: retire it here
            worker.retire()
            retired = tainted
        # a baseline that changed the worker's process retired it: the next case gets a fresh one (harness.device.baselines)
        done = time.perf_counter()
        window = (window_start, time.time())  # wall-clock span this case held the GPU, for overlap audits
    where = GpuSlot(index=gpu.index, uuid=gpu.uuid)
    for rec in to_run:
        found[rec] = found[rec].updated(gpu=where)
    # where the case's time went: waiting for the GPU, checking and timing the configs, checking and timing the
    # baselines, then the finalists and the baselines timed together in interleaved rounds (shared by both)
    phases = Phases().updated(
        gpu_lock_wait=round(started - waited, 3),
        configs=round(configs_done - started, 3),
        baselines=round(baselines_done - configs_done, 3),
        sustained=round(done - baselines_done, 3),
    )
    runtime = Runtime().updated(gpu=gpu, winner_source="cache" if cached else "tuned")
    if not cached:
        runtime = runtime.updated(tuned_because=tuned_because or "--retune")
    if found.spent:
        phases = phases.updated(configs_detail=dict(found.spent))
    runtime = runtime.updated(
        phases_s=phases.updated(baselines_detail=spent) if measured else phases,
        gpu_window=window,
        configs_launched=len(to_run),
        configs_failed=sum(1 for r in to_run if not found.ok(r)),
        configs_not_launched=len(records) - len(launchable),
    )
    if retired:  # a baseline that changed the worker's process retired it: the next case gets a fresh one
        runtime = runtime.updated(gpu_worker_retired=retired)
    if not measured:
        return tune_record(first, case, None, "error", "no config ran correctly on the device", runtime)
    measured = [found.record(r) for r in measured]
    best = min(measured, key=rank)
    if not cached:
        space_best = {space: r.config for space, r in best_per_space(measured).items()}
        save_winner(
            key,
            Winner(
                config=best.config,
                median_us=runtime_of(best).median,
                arch=target.arch,
                device=gpu.name or "",
                space_best=space_best,
                context=context,
            ),
        )
    won = runtime.merged(figures(best, baselines)).updated(
        portability=portability(case, [found.record(r) for r in records], known, best)
    )
    return tune_record(best, case, best.config, "ok", "", won.updated(median_us=won.median))


FINALISTS = 3  # the fastest screened configs that get a full timing ...
FINALIST_MARGIN = 1.10  # ... among those within 10% of the fastest screen


def _screen_then_time(
    worker: GpuClient,
    base: BaselinesJob,
    to_run: list[Record],
    known: dict[str, KnownWinner | None],
    timeout: float,
    found: _Found,
) -> None:
    """Check and briefly time every config; then time in full the ones a decision rests on.

    Those are the fastest few (the winner is chosen among them, on full timings), the best
    of each vendor's space and the other targets' known winners (the portability column
    reads their timings). Every other config keeps its own screening timing, marked
    ``stage: screen`` with its sample count, so no config's result is hidden.
    """
    for rec in to_run:
        found[rec] = launch_parity(rec, _runtime(worker.send(_config_job(base, rec, "screen"), timeout), found.spent))
    ok = sorted((r for r in to_run if found.ok(r)), key=lambda r: found[r].median)
    if not ok:
        return
    fastest = found[ok[0]].median
    final = {r.key(): r for r in ok[:FINALISTS] if found[r].median <= FINALIST_MARGIN * fastest}
    for space in {s for r in ok for s in spaces(r)}:
        best = next(r for r in ok if space in spaces(r))
        final[best.key()] = best
    wanted = {config_key(dict(w.config)) for w in known.values() if w}
    final.update({r.key(): r for r in ok if config_key(r.config) in wanted})
    for rec in final.values():
        screen = found[rec]
        full = _runtime(worker.send(_config_job(base, rec, "final"), timeout), found.spent)
        if full.ok:
            kept = ("launched_binary", "launch_parity", "launch_parity_detail")
            found[rec] = full.updated(
                correctness=screen.correctness,
                first_launch_s=screen.first_launch_s,
                screen_timing=screen.timing,
                **{k: getattr(screen, k) for k in kept if screen.has(k)},
            )
        else:  # a config that ran in its screen and then failed keeps that failure as its result
            found[rec] = full.updated(screen_timing=screen.timing)


def _read_sustained(measured: list[Record], known: dict[str, KnownWinner | None], found: _Found) -> list[Record]:
    """The fully timed configs whose sustained timing a decision reads: the winner (its headline figure and
    speed-ups), each config space's best (the proxy the portability column prices another vendor's target by)
    and the other targets' known winners (priced by name). The other finalists were timed in full to choose
    the winner, which rests on those timings (:func:`rank`); timing them again in the rounds decides nothing
    and costs the GPU about ``SWITCH_MS`` per switch, ten switches a round pair (docs/performance.md, issue 59)."""
    done = [found.record(r) for r in measured if not found[r].screened]
    if not done:
        return []
    keep = {min(done, key=rank).key()} | {r.key() for r in best_per_space(done).values()}
    wanted = {config_key(dict(w.config)) for w in known.values() if w}
    keep |= {r.key() for r in done if config_key(r.config) in wanted}
    return [r for r in measured if r.key() in keep]


def _time_sustained(
    worker: GpuClient,
    base: BaselinesJob,
    measured: list[Record],
    baselines: BaselinesReply,
    timeout: float,
    found: _Found,
) -> tuple[BaselinesReply, dict[str, float], str]:
    """The sustained timing of the given fully timed configs and every baseline that ran, in interleaved rounds; kept
    as each one's ``sustained`` beside its isolated ``timing`` (a failure as ``sustained_error``). Returns the
    baselines with theirs, where the request's time went and why the worker retired after it ('' when it did not)."""
    finals = {r.config_id: r for r in measured if not found[r].screened}
    ran = {n: b for n, b in (baselines.baselines or {}).items() if b.status == "ok"}
    on_device = {f.name: getattr(base, f.name) for f in dataclasses.fields(OnDevice)}
    job = SustainedJob(**on_device, configs={cid: _applied(r) for cid, r in finals.items()}, baselines=tuple(ran))
    reply = SustainedReply.of(worker.send(job, timeout * 2))
    timings = reply.timings or {}
    missing = reply.error or "not timed"
    for cid, rec in finals.items():
        got = timings.get(f"config {cid}")
        if got is not None and got.timing is not None:
            found[rec] = found[rec].updated(sustained=got.timing)
        else:
            found[rec] = found[rec].updated(sustained_error=(got.error or "") if got is not None else missing)
    timed = dict(baselines.baselines or {})
    for name, entry in ran.items():
        got = timings.get(f"baseline {name}")
        if got is not None and got.timing is not None:
            timed[name] = entry.updated(sustained=got.timing)
        else:
            timed[name] = entry.updated(sustained_error=(got.error or "") if got is not None else missing)
    return baselines.updated(baselines=timed), dict(reply.spent_s or {}), reply.retire_worker or ""
