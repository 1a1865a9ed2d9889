"""The tuning-portability penalty as a run's records give it: another target's winner, run on this device.

The GPU phase prices, per case, the winners it knows before it tunes (a stored run named with
``--winners-from``) or else a proxy (the other vendor space's best here; for another model of the
same architecture, this device's own best). Another target tuned *in the same run* (a host with two
GPU models, or ``--device-as``) is only known once its case has run, so its winner is priced here,
from the records, whatever order the cases ran in: the slowdown of that config's timing in this
case's records against this case's winner, by the rule the GPU phase prices with
(:func:`harness.model.timings.slowdown`). Nothing is read from a host's winner cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.model.ids import config_key
from harness.model.records import Record
from harness.model.runtime import PortabilityEntry, Runtime
from harness.model.timings import slowdown


def _priced(case_records: list[Record], winner: Record, config: dict[str, Any]) -> PortabilityEntry | None:
    """``config`` timed in this case against this case's winner config, or None where it did not run here."""
    by_id = {r.config_id: r for r in case_records}
    rec = next((r for r in case_records if config_key(r.config) == config_key(config)), None)
    own = next((r for r in case_records if r.config_id == winner.config_id), None)
    if rec is None or own is None:
        return None
    rec, own = by_id.get(rec.duplicate_of, rec), by_id.get(own.duplicate_of, own)  # a duplicate ran as its original
    rt, ort = rec.runtime or Runtime(), own.runtime or Runtime()
    if not rt.ok or not ort.ok:
        return PortabilityEntry.from_json(
            {
                "source": "its winner in this run, timed here",
                "config_id": rec.config_id,
                "fits": bool(rec.fits),
                "status": rt.status,
                "slowdown": None,
                "note": "did not run here",
            }
        )
    price = slowdown(rt, ort)
    if price is not None:
        return PortabilityEntry.from_json(
            {
                "source": "its winner in this run, timed here",
                "config_id": rec.config_id,
                "fits": bool(rec.fits),
                "status": "ok",
                "slowdown": price[0],
                "timing_method": price[1],
            }
        )
    return None


def of(tune: Record, records: Iterable[Record]) -> dict[str, PortabilityEntry]:
    """The portability entries of one tune record: what the GPU phase priced, with every other target tuned in
    the same records (same kernel, dtype, shape, Triton and host) priced from them instead of a proxy."""
    recorded = dict(tune.runtime.portability or {}) if tune.runtime is not None else {}
    if tune.mode != "tune" or tune.status != "ok":
        return recorded
    records = list(records)
    case_records = [r for r in records if r.mode == "compile" and r.case_id == tune.case_id]
    for other in records:
        if (
            other.mode != "tune"
            or other.status != "ok"
            or other.target == tune.target
            or (other.kernel, other.dtype, other.shape_id, other.triton, other.host)
            != (tune.kernel, tune.dtype, tune.shape_id, tune.triton, tune.host)
        ):
            continue
        if (recorded.get(other.target) or PortabilityEntry()).is_stored_winner():
            continue  # the user named the run whose winners count
        priced = _priced(case_records, tune, other.config)
        if priced is not None:
            recorded[other.target] = priced
    return recorded
