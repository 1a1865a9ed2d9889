"""Several runs as one: the same merge whatever order the runs are given in (oldest first by start, then host and
label), the last run's record winning for one key and host, and the cases two runs' matrices defined differently
named (such runs are not mixed)."""

from __future__ import annotations

import json
from typing import Iterable

from harness.model.records import Record
from harness.model.run_info import RunInfo


def merge(record_sets: Iterable[list[Record]]) -> list[Record]:
    """Union of several runs, in key order; for the same key and host the last set's record wins (callers pass
    the sets oldest first: see :func:`merge_runs`)."""
    merged: dict[tuple[str, ...], Record] = {}
    for records in record_sets:
        for r in records:
            merged[r.key() + (r.host,)] = r
    return [merged[k] for k in sorted(merged)]


def _case_content(r: Record) -> str:
    """What a matrix puts into one case beyond its key: the environment's variables, the interpreter's shapes."""
    checks = r.correctness.checks if r.correctness is not None else None
    shapes = [c.shape for c in checks or ()] if r.mode == "interpret" else []
    return json.dumps([sorted((r.env or {}).items()), shapes], sort_keys=True, default=str)


def merge_runs(
    loaded: list[tuple[str, RunInfo, list[Record]]],
) -> tuple[list[RunInfo], list[Record], list[str]]:
    """Runs (label, run info, records) merged the same way whatever order they are given in: oldest first by the
    run's start, then host and label. Returns (runs, records, conflicts): a conflict is one case (same key and
    host) that two runs' matrices defined differently (other environment variables, other interpreter shapes) —
    such runs are not mixed; the caller reports them."""
    ordered = sorted(loaded, key=lambda t: (str(t[1].start or ""), str(t[1].host or ""), t[0]))
    seen: dict[tuple[str, ...], tuple[str, str]] = {}
    conflicts = []
    for label, _, records in ordered:
        for r in records:
            key, content = r.key() + (r.host,), _case_content(r)
            if key in seen and seen[key][1] != content:
                conflicts.append(
                    f"{seen[key][0]} and {label} both hold {r.kernel} {r.dtype} {r.shape_id} {r.column} "
                    f"{r.config_id} (triton {r.triton}, {r.mode}), defined differently by their matrices "
                    "(environment variables or interpreter shapes)"
                )
                break
            seen[key] = (label, content)
    return [run for _, run, _ in ordered], merge(records for _, _, records in ordered), conflicts
