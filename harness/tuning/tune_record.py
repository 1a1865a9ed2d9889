"""A case's ``tune`` record: the winner's figures (its timings, rates and the baselines' speedups, sustained where
measured), the tuning-portability entries (another target's winner on this device), and the record a failed GPU
phase leaves instead."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Mapping
from typing import Any

from harness.matrix.cases import Case
from harness.model.ids import config_id, config_key
from harness.model.records import Record
from harness.model.replies import BaselinesReply
from harness.model.runtime import (
    STORED_WINNER_SOURCE,
    Baseline,
    PortabilityEntry,
    Runtime,
    WorkModel,
    not_launched,
)
from harness.model.targets import catalogue
from harness.model.timings import headline, round_ratios, slowdown
from harness.model.vocabulary import Status
from harness.tuning.winners import KnownWinner


def runtime_of(rec: Record) -> Runtime:
    """A record's runtime entry where the GPU phase has set it (every launched config, the tune record)."""
    assert rec.runtime is not None, f"{rec.config_id}: no runtime entry"
    return rec.runtime


def spaces(rec: Record) -> list[str]:
    """The config spaces a record's config came from (``nvidia+amd``: listed in both)."""
    return rec.origin.split("+")


def rank(rec: Record) -> tuple[bool, float]:
    """Fully timed configs first (decisions rest on them), then by median."""
    return runtime_of(rec).screened, runtime_of(rec).median


def best_per_space(records: list[Record]) -> dict[str, Record]:
    """Each config space's best of these measured records, by :func:`rank`, in the spaces' order."""
    return {
        space: min((r for r in records if space in spaces(r)), key=rank)
        for space in sorted({s for r in records for s in spaces(r)})
    }


def figures(best: Record, baselines: BaselinesReply) -> Runtime:
    """The winner's figures: its sustained timing (rates from it), its isolated one beside; each baseline's
    speedup as the median of the interleaved rounds' ratios, with their range."""

    rt = runtime_of(best)
    timing, method = headline(rt)
    model = rt.model
    seconds = timing.median * 1e-6
    # no share of a peak here: the roof is decided in the analysis, for the device that ran (harness.analysis.roofline)
    found: dict[str, Baseline] = {}
    for name, b in (baselines.baselines or {}).items():
        if b.status == "ok":
            b_timing, b_method = headline(b)
            ratios = (
                round_ratios(b_timing.round_medians_us or (), timing.round_medians_us or ())
                if b_method == method == "sustained"
                else []
            )
            b = b.updated(
                speedup=statistics.median(ratios) if ratios else b_timing.median / timing.median,
                speedup_method="sustained, median of interleaved rounds" if ratios else b_method,
            )
            if ratios:
                b = b.updated(speedup_rounds=tuple(round(x, 4) for x in ratios))
        else:
            b = b.updated(speedup=None)
        found[name] = b
    return Runtime().updated(
        device=baselines.device,
        copy_tbps=baselines.copy_tbps,
        timing=timing,
        timing_method=method,
        isolated=rt.timing,
        torch_settings=baselines.torch_settings,
        graph_time=baselines.graph_time,
        tflops=float(model.flops or 0.0) / seconds / 1e12 if model else rt.tflops,
        gbps=float(model.bytes or 0.0) / seconds / 1e9 if model else rt.gbps,
        model=model if model is not None else WorkModel(),
        baselines=found,
    )


def portability(
    case: Case, records: list[Record], known_winners: dict[str, KnownWinner | None], best: Record
) -> dict[str, PortabilityEntry]:
    """How the other targets' winners do here: fits? how much slower than the local winner (sustained timings
    where both have one, else isolated)?"""
    by_key = {config_key(r.config): r for r in records}
    by_id = {r.config_id: r for r in records}
    by_key = {k: by_id.get(r.duplicate_of, r) for k, r in by_key.items()}  # a duplicate ran as its original
    out: dict[str, PortabilityEntry] = {}
    for name, known in known_winners.items():
        t = catalogue()[name]
        stored: dict[str, bool] = {}
        if known:  # that model's own tuned winner, from the stored run the user named, timed here
            rec, source = by_key.get(config_key(known.config)), STORED_WINNER_SOURCE
            stored = {"stored_winner": True}
        elif t.arch == catalogue()[case.target].arch:
            rec, source = best, f"same architecture, no {name} winner known: this device's own best"
        else:
            space = [r for r in records if t.vendor in spaces(r) and r.runtime and r.runtime.ok]
            rec = min(space, key=rank) if space else None
            source = f"proxy: best of the {t.vendor} space here (no {t.arch} winner known)"
            if rec is None:
                failed = [r for r in records if t.vendor in spaces(r)]
                out[name] = PortabilityEntry().updated(
                    source=source,
                    fits=False if failed else None,
                    note="no config of that space ran here" if failed else "no such configs",
                )
                continue
        if rec is None:
            out[name] = PortabilityEntry().updated(
                source=source,
                **stored,
                config=known.config if known else None,
                fits=None,
                note="winner not in this case's config list",
            )
            continue
        rt = rec.runtime
        ok = rt is not None and rt.ok
        price = slowdown(rt, runtime_of(best)) if rt is not None and ok else None
        entry = PortabilityEntry().updated(
            source=source,
            **stored,
            config_id=config_id(rec.config),
            fits=bool(rec.fits),
            status=rt.status if rt is not None else None,
            slowdown=price[0] if price else None,
        )
        out[name] = entry.updated(timing_method=price[1]) if price else entry
    return out


def failed_tune(case: Case, records: list[Record], error: str) -> tuple[list[Record], Record]:
    """A case whose GPU phase raised: its builds as new records that say they did not run, and its tune record."""
    said = [r if r.runtime else dataclasses.replace(r, runtime=not_launched(error[:300])) for r in records]
    return said, tune_record(said[0], case, None, "error", error, Runtime())


def tune_record(
    rec: Record, case: Case, config: Mapping[str, Any] | None, status: Status, error: str, runtime: Runtime
) -> Record:
    return Record(
        kernel=rec.kernel,
        dtype=rec.dtype,
        shape=rec.shape,
        target=rec.target,
        arch=rec.arch,
        vendor=rec.vendor,
        triton=rec.triton,
        config=dict(config or {}),
        config_id=config_id(dict(config or {})),
        meta=rec.meta if config else {},
        origin=rec.origin if config else "",
        ignored_options=list(rec.ignored_options) if config else [],  # the winner launches as its build does
        mode="tune",
        status=status,
        error=error,
        kernel_hash=rec.kernel_hash,
        runtime=runtime,
        case_id=rec.case_id,
    )
