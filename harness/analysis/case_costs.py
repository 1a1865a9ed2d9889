"""What each case of a stored run cost, in seconds: what ``harness run --shard`` balances on when given a run
(``--shard-costs RUN``) rather than on build counts alone.

A case's cost is its builds compiled from source (``compile_s`` of cold builds: a build Triton or the harness took
from a cache says nothing about a compile's cost) plus the time it held the GPU (its tune record's phases). A
case the run compiled nothing cold for, or that it does not hold, is estimated from its build count at the run's
median cold seconds per build; interpreter checks, whose time records do not keep, the same way.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from harness.model.records import Record


def measured(records: list[Record]) -> tuple[dict[str, float], float | None]:
    """Per case id, its measured seconds; and the median seconds of one cold build (None: no cold build)."""
    cost: dict[str, float] = defaultdict(float)
    cold: list[float] = []
    for r in records:
        if not r.case_id:
            continue
        if r.mode == "compile" and r.compile_cache == "miss" and r.compile_s:
            cost[r.case_id] += float(r.compile_s)
            cold.append(float(r.compile_s))
        elif r.mode == "tune" and r.runtime is not None and r.runtime.phases_s is not None:
            p = r.runtime.phases_s
            cost[r.case_id] += sum(float(x or 0) for x in (p.configs, p.baselines, p.sustained))
    return dict(cost), (statistics.median(cold) if cold else None)
