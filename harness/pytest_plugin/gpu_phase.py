"""The GPU phase of a case, orchestrated from the pytest process (its lock and winner cache: :mod:`harness.pytest_plugin.winners`).

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
from typing import Any

from harness.model.ids import config_id, config_key
from harness.model.records import Record
from harness.model.targets import Target, catalogue
from harness.pytest_plugin.winners import gpu_lock, known_winners, load_winner, save_winner, tuning_context, winner_key


def _runtime(rec: Record) -> dict[str, Any]:
    """A record's runtime entry where the GPU phase has set it (every launched config, the tune record)."""
    assert rec.runtime is not None, f"{rec.config_id}: no runtime entry"
    return rec.runtime


def _applied(rec: Record) -> dict[str, Any]:
    return {k: v for k, v in rec.config.items() if k not in rec.ignored_options}


def run_case(
    case: Any,
    records: list[Record],
    worker: Any,
    gpu: dict[str, str],
    other_targets: list[str],
    retune: bool = False,
    stored: dict[tuple[str, str, str, str], dict[str, Any]] | None = None,
) -> tuple[list[Record], Record]:
    """The GPU phase of one case: its compile records as the device found them (new records, each with its
    ``runtime``; the build stage's records are left as they are) and the case's ``tune`` record. ``stored``:
    other targets' winners from a stored run (:func:`stored_winners`), timed here for the portability column."""
    on_device = [dataclasses.replace(r) for r in records]
    return on_device, _tune(case, on_device, worker, gpu, other_targets, retune, stored)


def _tune(
    case: Any,
    records: list[Record],
    worker: Any,
    gpu: dict[str, str],
    other_targets: list[str],
    retune: bool,
    stored: dict[tuple[str, str, str, str], dict[str, Any]] | None,
) -> Record:
    """Fill ``runtime`` on each of the phase's own records; return the tune record."""
    target: Target = catalogue()[case.target]
    first = records[0]
    key = winner_key(case.kernel, case.dtype, case.shape, target, case.triton, first.kernel_hash)
    cached = None if retune else load_winner(key)
    base = {
        "ref": case.ref,
        "dtype": case.dtype,
        "shape": case.shape,
        "seed": case.seed,
        "cache_bytes": target.cache_bytes,
        "target": case.target,
    }
    launchable = [r for r in records if r.status == "ok" and r.fits and not r.duplicate_of]
    for rec in records:
        if rec.duplicate_of and rec.status == "ok":
            rec.runtime = {
                "status": "not_launched",
                "reason": f"same binary as {rec.duplicate_of} (sha256, warps, shared bytes, CTAs and grid)",
            }
        elif rec not in launchable:
            reason = (
                rec.error
                if rec.status != "ok"
                else "; ".join(f"{f.resource} {f.value:g} > {f.limit:g}" for f in rec.flags if f.severity == "error")
            )
            rec.runtime = {"status": "not_launched", "reason": f"failed the static check: {reason}"}
    known = known_winners(case, other_targets, stored or {})
    to_run = launchable
    tuned_because = "" if cached or retune else "no cached winner"
    context = tuning_context(records, gpu)
    if cached and (stale := [k for k, v in context.items() if cached.get(k) != v]):
        # a winner chosen among other configs, under another torch or on another device model is no winner here
        cached, tuned_because = None, "cached winner stale: " + ", ".join(stale) + " changed"
    if cached:
        # re-time the cached winner, the other targets' known winners, and each space's best
        # from the tuning run, so the portability column survives winner reuse
        wanted = (
            {config_key(cached["config"])}
            | {config_key(w["config"]) for w in known.values() if w}
            | {config_key(c) for c in (cached.get("space_best") or {}).values()}
        )
        to_run = [r for r in launchable if config_key(r.config) in wanted]
        if not any(config_key(r.config) == config_key(cached["config"]) for r in to_run):
            cached, to_run = None, launchable  # the cached winner left the config space: tune again
            tuned_because = "cached winner left the config space"
    waited = time.perf_counter()
    with gpu_lock(gpu):
        window_start = time.time()
        started = time.perf_counter()
        if cached:  # a handful of known configs: check and time each in full
            for rec in to_run:
                job = {**base, "config": _applied(rec), "cache_key": rec.cache_key}
                rec.runtime = worker.request("gpu_config", job, case.timeout_s)
                _launch_parity(rec)
        else:
            _screen_then_time(worker, base, to_run, known, case.timeout_s)
        measured = [r for r in to_run if r.runtime and _runtime(r).get("status") == "ok"]
        configs_done = time.perf_counter()
        baselines = worker.request("gpu_baselines", base, case.timeout_s * 4) if measured else {}
        spent, retired = dict(baselines.get("spent_s") or {}), ""
        if measured and baselines.get("status") == "ok":
            more, retired = _time_sustained(worker, base, measured, baselines, case.timeout_s)
            spent.update(more)
        # a baseline that changed the worker's process retired it: the next case gets a fresh one (harness.device.operations)
        runtime_note = (
            {"gpu_worker_retired": baselines.get("retire_worker") or retired}
            if baselines.get("retire_worker") or retired
            else {}
        )
        done = time.perf_counter()
        window = [window_start, time.time()]  # wall-clock span this case held the GPU, for overlap audits
    where = {"index": gpu.get("index"), "uuid": gpu.get("uuid")}
    for rec in to_run:
        rec.runtime = {**_runtime(rec), "gpu": where}
    # where the case's time went: waiting for the GPU, checking and timing the configs, the baselines
    phases: dict[str, Any] = {
        "gpu_lock_wait": started - waited,
        "configs": configs_done - started,
        "baselines": done - configs_done,
    }
    runtime: dict[str, Any] = {
        "gpu": gpu,
        "winner_source": "cache" if cached else "tuned",
        **({"tuned_because": tuned_because or "--retune"} if not cached else {}),
        "phases_s": {
            **{k: round(v, 3) for k, v in phases.items()},
            **({"baselines_detail": spent} if measured else {}),
        },
        "gpu_window": window,
        "configs_launched": len(to_run),
        "configs_failed": sum(1 for r in to_run if _runtime(r).get("status") != "ok"),
        "configs_not_launched": len(records) - len(launchable),
        **runtime_note,
    }
    if not measured:
        return _tune_record(first, case, None, "error", "no config ran correctly on the device", runtime)
    best = min(measured, key=_rank)
    if not cached:
        space_best = {}
        for space in sorted({s for r in measured for s in spaces(r)}):
            space_best[space] = min((r for r in measured if space in spaces(r)), key=_rank).config
        save_winner(
            key,
            {
                "config": best.config,
                "median_us": _runtime(best)["timing"]["median_us"],
                "arch": target.arch,
                "device": gpu.get("name", ""),
                "space_best": space_best,
                **context,
            },
        )
    runtime.update(_figures(best, baselines))
    win_us = runtime["timing"]["median_us"]
    runtime["portability"] = _portability(case, records, known, best)
    rec = _tune_record(best, case, best.config, "ok", "", runtime)
    _runtime(rec)["median_us"] = win_us
    return rec


def _launch_parity(rec: Record) -> None:
    """Compare the binary Triton's JIT launched with the one the static phase recorded (sha256).

    ``identical``: the static figures (registers, spills, LDS, instruction counts) are those
    of the kernel that ran; ``differs``: a finding (the static build is not what launches);
    ``not observed``: no binary could be tied to the launch (nothing new in the JIT cache and no
    kernel there with the record's cache key).
    """
    if not rec.runtime or _runtime(rec).get("status") != "ok":
        return
    launched = _runtime(rec).get("launched_binary") or {}
    binary = rec.artifacts.get(launched.get("kind", ""))
    static = binary.sha256 if binary is not None else None
    if not launched.get("sha256") or not static:
        _runtime(rec)["launch_parity"] = "not observed"
    else:
        _runtime(rec)["launch_parity"] = "identical" if launched["sha256"] == static else "differs"
        if launched["sha256"] != static:
            # same cache key: one compile request, two binaries (non-deterministic codegen, or a cache entry
            # replaced); other key, same TTIR: the options or environment differed; other TTIR: the launch
            # specialised differently (signature, attributes, constexprs)
            same_key = bool(rec.cache_key) and launched.get("cache_key") == rec.cache_key
            ttir = rec.artifacts.get("ttir")
            same_ttir = ttir is not None and launched.get("ttir_sha256") == ttir.sha256
            _runtime(rec)["launch_parity_detail"] = ("same cache key" if same_key else "other cache key") + (
                ", same TTIR" if same_ttir else ", other TTIR"
            )


def spaces(rec: Record) -> list[str]:
    """The config spaces a record's config came from (``nvidia+amd``: listed in both)."""
    return rec.origin.split("+")


def _rank(rec: Record) -> tuple[bool, float]:
    """Fully timed configs first (decisions rest on them), then by median."""
    return _runtime(rec).get("stage") == "screen", _runtime(rec)["timing"]["median_us"]


FINALISTS = 3  # the fastest screened configs that get a full timing ...
FINALIST_MARGIN = 1.10  # ... among those within 10% of the fastest screen


def _screen_then_time(
    worker: Any, base: dict[str, Any], to_run: list[Record], known: dict[str, dict[str, Any] | None], timeout: float
) -> None:
    """Check and briefly time every config; then time in full the ones a decision rests on.

    Those are the fastest few (the winner is chosen among them, on full timings), the best
    of each vendor's space and the other targets' known winners (the portability column
    reads their timings). Every other config keeps its own screening timing, marked
    ``stage: screen`` with its sample count, so no config's result is hidden.
    """
    for rec in to_run:
        rec.runtime = worker.request(
            "gpu_config", {**base, "config": _applied(rec), "stage": "screen", "cache_key": rec.cache_key}, timeout
        )
        _launch_parity(rec)
    ok = sorted(
        (r for r in to_run if _runtime(r).get("status") == "ok"), key=lambda r: _runtime(r)["timing"]["median_us"]
    )
    if not ok:
        return
    fastest = _runtime(ok[0])["timing"]["median_us"]
    final = {id(r): r for r in ok[:FINALISTS] if _runtime(r)["timing"]["median_us"] <= FINALIST_MARGIN * fastest}
    for space in {s for r in ok for s in spaces(r)}:
        best = next(r for r in ok if space in spaces(r))
        final[id(best)] = best
    wanted = {config_key(w["config"]) for w in known.values() if w}
    final.update({id(r): r for r in ok if config_key(r.config) in wanted})
    for rec in final.values():
        screen = _runtime(rec)
        full = worker.request("gpu_config", {**base, "config": _applied(rec), "stage": "final"}, timeout)
        if full.get("status") == "ok":
            rec.runtime = {
                **full,
                "correctness": screen.get("correctness"),
                "first_launch_s": screen.get("first_launch_s"),
                "screen_timing": screen["timing"],
                **{k: screen[k] for k in ("launched_binary", "launch_parity", "launch_parity_detail") if k in screen},
            }
        else:  # a config that ran in its screen and then failed keeps that failure as its result
            rec.runtime = {**full, "screen_timing": screen["timing"]}


def _time_sustained(
    worker: Any, base: dict[str, Any], measured: list[Record], baselines: dict[str, Any], timeout: float
) -> tuple[dict[str, float], str]:
    """The sustained timing of every fully timed config and every baseline that ran, in interleaved rounds; kept
    as ``runtime["sustained"]`` beside each one's isolated ``timing`` (a failure as ``sustained_error``). Returns
    where the request's time went and why the worker retired after it ('' when it did not)."""
    finals = {r.config_id: r for r in measured if _runtime(r).get("stage") != "screen"}
    names = [n for n, b in (baselines.get("baselines") or {}).items() if b.get("status") == "ok"]
    reply = worker.request(
        "gpu_sustained",
        {**base, "configs": {cid: _applied(r) for cid, r in finals.items()}, "baselines": names},
        timeout * 2,
    )
    timings = reply.get("timings") or {}
    for cid, rec in finals.items():
        got = timings.get(f"config {cid}") or {"error": reply.get("error", "not timed")}
        rec.runtime = {
            **_runtime(rec),
            **({"sustained": got["timing"]} if "timing" in got else {"sustained_error": got.get("error", "")}),
        }
    for name in names:
        got = timings.get(f"baseline {name}") or {"error": reply.get("error", "not timed")}
        entry = baselines["baselines"][name]
        entry.update({"sustained": got["timing"]} if "timing" in got else {"sustained_error": got.get("error", "")})
    return dict(reply.get("spent_s") or {}), str(reply.get("retire_worker") or "")


def _figures(best: Record, baselines: dict[str, Any]) -> dict[str, Any]:
    """The winner's figures: its sustained timing (rates from it), its isolated one beside; each baseline's
    speedup as the median of the interleaved rounds' ratios, with their range."""
    import statistics

    from harness.model.timings import headline, round_ratios

    rt = best.runtime or {}
    timing, method = headline(rt)
    model = rt.get("model") or {}
    seconds = timing["median_us"] * 1e-6
    # no share of a peak here: the roof is decided in the analysis, for the device that ran (harness.analysis.roofline)
    out: dict[str, Any] = {
        "device": baselines.get("device"),
        "copy_tbps": baselines.get("copy_tbps"),
        "timing": timing,
        "timing_method": method,
        "isolated": rt.get("timing"),
        "torch_settings": baselines.get("torch_settings"),
        "tflops": float(model.get("flops", 0.0)) / seconds / 1e12 if model else rt.get("tflops"),
        "gbps": float(model.get("bytes", 0.0)) / seconds / 1e9 if model else rt.get("gbps"),
        "model": model,
    }
    out["baselines"] = {}
    for name, b in (baselines.get("baselines") or {}).items():
        entry = dict(b)
        if b.get("status") == "ok":
            b_timing, b_method = headline(b)
            ratios = (
                round_ratios(b_timing.get("round_medians_us") or [], timing.get("round_medians_us") or [])
                if b_method == method == "sustained"
                else []
            )
            entry["speedup"] = statistics.median(ratios) if ratios else b_timing["median_us"] / timing["median_us"]
            entry["speedup_method"] = "sustained, median of interleaved rounds" if ratios else b_method
            if ratios:
                entry["speedup_rounds"] = [round(x, 4) for x in ratios]
        else:
            entry["speedup"] = None
        out["baselines"][name] = entry
    return out


def _portability(
    case: Any, records: list[Record], known_winners: dict[str, dict[str, Any] | None], best: Record
) -> dict[str, Any]:
    """How the other targets' winners do here: fits? how much slower than the local winner (sustained timings
    where both have one, else isolated)?"""
    by_key = {config_key(r.config): r for r in records}
    by_id = {r.config_id: r for r in records}
    by_key = {k: by_id.get(r.duplicate_of, r) for k, r in by_key.items()}  # a duplicate ran as its original
    out: dict[str, Any] = {}
    for name, known in known_winners.items():
        t = catalogue()[name]
        if known:  # that model's own tuned winner, from the stored run the user named, timed here
            rec, source = by_key.get(config_key(known["config"])), "its winner in the stored run, timed here"
        elif t.arch == catalogue()[case.target].arch:
            rec, source = best, f"same architecture, no {name} winner known: this device's own best"
        else:
            space = [r for r in records if t.vendor in spaces(r) and r.runtime and _runtime(r).get("status") == "ok"]
            rec = min(space, key=_rank) if space else None
            source = f"proxy: best of the {t.vendor} space here (no {t.arch} winner known)"
            if rec is None:
                failed = [r for r in records if t.vendor in spaces(r)]
                out[name] = {
                    "source": source,
                    "fits": False if failed else None,
                    "note": "no config of that space ran here" if failed else "no such configs",
                }
                continue
        if rec is None:
            out[name] = {
                "source": source,
                "config": known["config"] if known else None,
                "fits": None,
                "note": "winner not in this case's config list",
            }
            continue
        ok = rec.runtime and _runtime(rec).get("status") == "ok"
        both = ok and "sustained" in _runtime(rec) and "sustained" in _runtime(best)
        field = "sustained" if both else "timing"
        out[name] = {
            "source": source,
            "config_id": config_id(rec.config),
            "fits": bool(rec.fits),
            "status": _runtime(rec).get("status") if rec.runtime else None,
            "slowdown": _runtime(rec)[field]["median_us"] / _runtime(best)[field]["median_us"] if ok else None,
            **({"timing_method": "sustained" if both else "isolated"} if ok else {}),
        }
    return out


def failed_tune(case: Any, records: list[Record], error: str) -> tuple[list[Record], Record]:
    """A case whose GPU phase raised: its builds as new records that say they did not run, and its tune record."""
    said = [
        r if r.runtime else dataclasses.replace(r, runtime={"status": "not_launched", "reason": error[:300]})
        for r in records
    ]
    return said, _tune_record(said[0], case, None, "error", error, {})


def _tune_record(
    rec: Record, case: Any, config: dict[str, Any] | None, status: str, error: str, runtime: dict[str, Any]
) -> Record:
    return Record(
        kernel=rec.kernel,
        dtype=rec.dtype,
        shape=rec.shape,
        target=rec.target,
        arch=rec.arch,
        vendor=rec.vendor,
        triton=rec.triton,
        config=config or {},
        config_id=config_id(config or {}),
        meta=rec.meta if config else {},
        origin=rec.origin if config else "",
        mode="tune",
        status=status,
        error=error,
        kernel_hash=rec.kernel_hash,
        runtime=runtime,
        case_id=rec.case_id,
    )
