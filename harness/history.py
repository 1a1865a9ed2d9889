"""Nights of results in one embedded SQLite file, and the step changes across them.

``harness history add DIR...`` stores every timed figure of the runs (per case × target column ×
config: the full-timing median; per tuned case: the winner's median and the primary baseline's) with
the night it came from (the run's start), host, Triton version and commit. ``harness history show``
prints a series per figure and marks a *step*: the last ``hold`` nights all beyond ``threshold`` from
the median of the nights before them, in the same direction — a lasting shift. One night off and back
again is a blip and is not marked. Plain Python and the standard library's sqlite3.
"""
from __future__ import annotations

import math
import sqlite3
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from harness.records import Record

SCHEMA = """
CREATE TABLE IF NOT EXISTS figures (
    night TEXT NOT NULL, host TEXT NOT NULL, triton TEXT NOT NULL, commit_id TEXT NOT NULL,
    series TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL,
    PRIMARY KEY (night, host, series, metric)
)
"""


#: compiler figures kept per config beside the timings (from the record's resource report)
RESOURCE_METRICS = ("registers", "shared", "spill_bytes")


def _figures(records: Iterable[Record]) -> Iterable[tuple[str, str, float]]:
    """(series, metric, value): what is worth a trend, from one run's records."""
    for r in records:
        if r.mode == "compile" and r.status == "ok" and isinstance(r.resources, dict):
            # static figures too: a night without a GPU still has a trend of what the compiler made
            for metric in RESOURCE_METRICS:
                value = r.resources.get(metric)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    yield f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}", metric, float(value)
        rt = r.runtime if isinstance(r.runtime, dict) else {}
        timing = rt.get("timing") if isinstance(rt.get("timing"), dict) else {}
        median = timing.get("median_us")
        if not isinstance(median, (int, float)) or median <= 0:
            continue
        if r.mode == "compile" and rt.get("status") == "ok" and rt.get("stage") != "screen":
            series = f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}"
            yield series, "median_us", float(median)
            sustained = (rt.get("sustained") or {}).get("median_us") if isinstance(rt.get("sustained"), dict) else None
            if isinstance(sustained, (int, float)) and sustained > 0:
                yield series, "sustained median_us", float(sustained)
        elif r.mode == "tune" and r.status == "ok":
            case = f"{r.kernel} {r.dtype} {r.shape_id} {r.target} winner"
            yield case, "median_us", float(median)
            first = next(iter((rt.get("baselines") or {}).items()), None)
            if first and isinstance(first[1], dict) and first[1].get("status") == "ok":
                value = (first[1].get("timing") or {}).get("median_us")
                if isinstance(value, (int, float)) and value > 0:
                    yield case, f"baseline {first[0]} median_us", float(value)


def add(db: Path, run: dict[str, Any], records: list[Record]) -> int:
    """Store one run's figures; a run already stored (same night and host) is replaced. Returns rows written."""
    db.parent.mkdir(parents=True, exist_ok=True)
    rows = [(str(run.get("start") or ""), str(run.get("host") or ""), str(run.get("triton") or ""),
             str(run.get("commit") or ""), series, metric, value) for series, metric, value in _figures(records)]
    with sqlite3.connect(db) as con:
        con.execute(SCHEMA)
        con.executemany("INSERT OR REPLACE INTO figures VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


@dataclass(frozen=True)
class Trend:
    series: str
    metric: str
    nights: tuple[str, ...]
    values: tuple[float, ...]
    step: float | None          # relative shift of the last `hold` nights against the nights before, when a step

    def line(self) -> str:
        vals = " ".join(f"{v:.1f}" for v in self.values)
        mark = "" if self.step is None else ("  STEP from zero over the last nights" if math.isinf(self.step)
                                             else f"  STEP {100 * self.step:+.1f}% over the last nights")
        return f"{self.series} [{self.metric}]: {vals}{mark}"


def step_of(values: list[float], threshold: float = 0.05, hold: int = 2) -> float | None:
    """The relative shift when the last ``hold`` values all sit beyond ``threshold`` of the earlier median, on the
    same side; None otherwise (too few nights, a blip, or noise)."""
    if len(values) < hold + 2:
        return None
    before = statistics.median(values[:-hold])
    if before == 0:  # a figure that was zero (spill bytes): any lasting non-zero value is a step
        return math.inf if all(v > 0 for v in values[-hold:]) else None
    shifts = [v / before - 1 for v in values[-hold:]]
    if all(s > threshold for s in shifts) or all(s < -threshold for s in shifts):
        return statistics.median(shifts)
    return None


def trends(db: Path, contains: str = "", threshold: float = 0.05, hold: int = 2) -> list[Trend]:
    with sqlite3.connect(db) as con:
        con.execute(SCHEMA)
        rows = con.execute("SELECT series, metric, night, value FROM figures WHERE series LIKE ? "
                           "ORDER BY series, metric, night", (f"%{contains}%",)).fetchall()
    grouped: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for series, metric, night, value in rows:
        grouped.setdefault((series, metric), []).append((night, value))
    out = []
    for (series, metric), points in grouped.items():
        values = [v for _, v in points]
        out.append(Trend(series, metric, tuple(n for n, _ in points), tuple(values),
                         step_of(values, threshold, hold)))
    return out


def noise_reader(db: Path) -> Callable[[str, str, bool], float | None]:
    """For ``harness compare --history``: a figure's night-to-night noise (σ of the log ratio of two nights) from
    its stored nights, None with fewer than five. The raw series of the same timing method is read also for a
    figure judged relative to its baseline: normalising removes shifts common to a run, so the raw noise is the
    larger, and the gate errs towards not calling."""
    from harness.compare.stats import history_sigma

    with sqlite3.connect(db) as con:
        con.execute(SCHEMA)
        rows = con.execute("SELECT series, metric, value FROM figures WHERE metric IN "
                           "('median_us', 'sustained median_us') ORDER BY night").fetchall()
    nights: dict[tuple[str, str], list[float]] = {}
    for series, metric, value in rows:
        nights.setdefault((series, metric), []).append(float(value))

    def sigma(series: str, method: str, normalised: bool) -> float | None:
        return history_sigma(nights.get((series, "sustained median_us" if method == "sustained" else "median_us"),
                                        []))

    return sigma
