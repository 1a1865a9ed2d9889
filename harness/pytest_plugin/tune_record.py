"""A case's ``tune`` record: the winner's figures (its timings, rates and the baselines' speedups, sustained where
measured), the tuning-portability entries (another target's winner on this device), and the record a failed GPU
phase leaves instead."""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any

from harness.model.ids import config_id, config_key
from harness.model.records import Record
from harness.model.targets import catalogue


def runtime_of(rec: Record) -> dict[str, Any]:
    """A record's runtime entry where the GPU phase has set it (every launched config, the tune record)."""
    assert rec.runtime is not None, f"{rec.config_id}: no runtime entry"
    return rec.runtime


def spaces(rec: Record) -> list[str]:
    """The config spaces a record's config came from (``nvidia+amd``: listed in both)."""
    return rec.origin.split("+")


def rank(rec: Record) -> tuple[bool, float]:
    """Fully timed configs first (decisions rest on them), then by median."""
    return runtime_of(rec).get("stage") == "screen", runtime_of(rec)["timing"]["median_us"]


def figures(best: Record, baselines: dict[str, Any]) -> dict[str, Any]:
    """The winner's figures: its sustained timing (rates from it), its isolated one beside; each baseline's
    speedup as the median of the interleaved rounds' ratios, with their range."""

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


def portability(
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
            space = [r for r in records if t.vendor in spaces(r) and r.runtime and runtime_of(r).get("status") == "ok"]
            rec = min(space, key=rank) if space else None
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
        ok = rec.runtime and runtime_of(rec).get("status") == "ok"
        both = ok and "sustained" in runtime_of(rec) and "sustained" in runtime_of(best)
        field = "sustained" if both else "timing"
        out[name] = {
            "source": source,
            "config_id": config_id(rec.config),
            "fits": bool(rec.fits),
            "status": runtime_of(rec).get("status") if rec.runtime else None,
            "slowdown": runtime_of(rec)[field]["median_us"] / runtime_of(best)[field]["median_us"] if ok else None,
            **({"timing_method": "sustained" if both else "isolated"} if ok else {}),
        }
    return out


def failed_tune(case: Any, records: list[Record], error: str) -> tuple[list[Record], Record]:
    """A case whose GPU phase raised: its builds as new records that say they did not run, and its tune record."""
    said = [
        r if r.runtime else dataclasses.replace(r, runtime={"status": "not_launched", "reason": error[:300]})
        for r in records
    ]
    return said, tune_record(said[0], case, None, "error", error, {})


def tune_record(
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
