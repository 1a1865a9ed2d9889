"""Nights of results in one embedded SQLite file (the trends and steps read from them: :mod:`harness.analysis.trends`).

``harness history add DIR...`` stores every timed figure of the runs (per case × target column ×
config: the full-timing median; per tuned case: the winner's median and the primary baseline's) with
the night it came from (the run's start), host, Triton and torch versions, the device model that timed it
and the commit — all of them in the key, so two runs of one host in the same second under two Tritons are
both kept. ``harness history show`` prints a series per figure, host and device, and marks a *step*: the
last ``hold`` nights all beyond ``threshold`` from the median of the nights before them, in the same
direction — a lasting shift. One night off and back again is a blip and is not marked. A file that is not
such a history (not SQLite, damaged, a directory, unreadable, another schema) is a :class:`HistoryError`
naming it. Plain Python and the standard library's sqlite3.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.model.records import Record
from harness.model.run_info import RunInfo
from harness.model.runtime import Baseline, DeviceInfo, GpuSlot, Runtime, Timing
from harness.support import safe_files

#: schema 2 (``nights``); schema 1's ``figures`` table (keyed by night and host alone) is copied in once
SCHEMA = """
CREATE TABLE IF NOT EXISTS nights (
    night TEXT NOT NULL, host TEXT NOT NULL, triton TEXT NOT NULL, torch TEXT NOT NULL, device TEXT NOT NULL,
    commit_id TEXT NOT NULL, series TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL,
    PRIMARY KEY (night, host, triton, torch, device, series, metric)
)
"""
_COLUMNS = {"night", "host", "triton", "torch", "device", "commit_id", "series", "metric", "value"}


class HistoryError(Exception):
    """The history file cannot be used; the message names it and says why, in one line."""


@contextmanager
def _open(db: Path, write: bool = False) -> Iterator[sqlite3.Connection]:
    """The history database, schema checked (and schema 1 carried over); every failure a HistoryError."""
    if db.is_dir():
        raise HistoryError(f"{db}: is a directory, not a history file")
    try:
        safe_files.check_regular(db, "history file")  # a FIFO or a device would block sqlite
    except safe_files.InputFileError as exc:
        raise HistoryError(str(exc)) from None
    if not write and not db.is_file():
        raise HistoryError(f"{db}: no such history file (harness history add RUN_DIR...)")
    try:
        if write:
            db.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(db if write else f"file:{db}?mode=ro", uri=not write, timeout=30)
    except (sqlite3.Error, OSError) as exc:
        raise HistoryError(f"{db}: cannot open: {exc}") from None
    try:
        with con:
            tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "nights" in tables:
                have = {row[1] for row in con.execute("PRAGMA table_info(nights)")}
                if have != _COLUMNS:
                    raise HistoryError(
                        f"{db}: its 'nights' table is not a harness history (columns {', '.join(sorted(have))})"
                    )
            elif write:
                con.execute(SCHEMA)
                if "figures" in tables:  # schema 1: no torch or device column
                    con.execute(
                        "INSERT OR IGNORE INTO nights SELECT night, host, triton, '', '', commit_id, series, "
                        "metric, value FROM figures"
                    )
            elif tables - {"figures"}:
                raise HistoryError(f"{db}: not a harness history (tables {', '.join(sorted(tables))})")
            yield con
    except sqlite3.Error as exc:
        raise HistoryError(f"{db}: {exc}") from None
    finally:
        con.close()


#: compiler figures kept per config beside the timings (from the record's resource report)
RESOURCE_METRICS = ("registers", "shared", "spill_bytes")


def _device(r: Record) -> str:
    """The model of the device that timed a record's figures ('' for a compiler figure)."""
    rt = r.runtime or Runtime()
    gpu: DeviceInfo | GpuSlot | None = rt.device if rt.device is not None else rt.gpu
    return str(gpu.name or "") if gpu is not None else ""


def _figures(records: Iterable[Record]) -> Iterable[tuple[str, str, str, float]]:
    """(device, series, metric, value): what is worth a trend, from one run's records."""
    for r in records:
        if r.mode == "compile" and r.status == "ok":
            # static figures too: a night without a GPU still has a trend of what the compiler made
            for metric in RESOURCE_METRICS:
                value = getattr(r.resources, metric)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    yield "", f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}", metric, float(value)
        rt = r.runtime or Runtime()
        median = rt.timing.median_us if rt.timing is not None else None
        if not isinstance(median, (int, float)) or median <= 0:
            continue
        if r.mode == "compile" and rt.ok and not rt.screened:
            series = f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}"
            yield _device(r), series, "median_us", float(median)
            sustained = rt.sustained.median_us if rt.sustained is not None else None
            if isinstance(sustained, (int, float)) and sustained > 0:
                yield _device(r), series, "sustained median_us", float(sustained)
        elif r.mode == "tune" and r.status == "ok":
            case = f"{r.kernel} {r.dtype} {r.shape_id} {r.target} winner"
            yield _device(r), case, "median_us", float(median)
            first = next(iter((rt.baselines or {}).items()), None)
            if first and isinstance(first[1], Baseline) and first[1].status == "ok":
                value = (first[1].timing or Timing()).median_us
                if isinstance(value, (int, float)) and value > 0:
                    yield _device(r), case, f"baseline {first[0]} median_us", float(value)


def add(db: Path, run: RunInfo, records: list[Record]) -> int:
    """Store one run's figures; the same run stored again (night, host, versions, device) is replaced. Returns
    rows written."""
    head = (
        str(run.start or ""),
        str(run.host or ""),
        str(run.triton or ""),
        str(run.torch or ""),
    )
    rows = [
        (*head, device, str(run.commit or ""), series, metric, value)
        for device, series, metric, value in _figures(records)
    ]
    with _open(db, write=True) as con:
        con.executemany("INSERT OR REPLACE INTO nights VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


def _source(con: sqlite3.Connection) -> str:
    """What to read: ``nights``, or a schema-1 file's ``figures`` as nights of no known torch or device (the next
    ``history add`` carries them over)."""
    names = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "nights" in names or "figures" not in names:
        return (
            "nights"
            if "nights" in names
            else "(SELECT '' AS night, '' AS host, '' AS device, '' AS series, '' AS metric, 0.0 AS value WHERE 0)"
        )
    return "(SELECT night, host, triton, '' AS torch, '' AS device, commit_id, series, metric, value FROM figures)"


def series(db: Path, contains: str = "") -> dict[tuple[str, str, str, str], list[tuple[str, float]]]:
    """Every stored figure whose series contains ``contains``: (series, metric, host, device) -> (night, value),
    nights in order. Two machines' nights are never one series."""
    with _open(db) as con:
        rows = con.execute(
            f"SELECT series, metric, host, device, night, value FROM {_source(con)} WHERE series "
            "LIKE ? ORDER BY series, metric, host, device, night",
            (f"%{contains}%",),
        ).fetchall()
    grouped: dict[tuple[str, str, str, str], list[tuple[str, float]]] = {}
    for series_name, metric, host, device, night, value in rows:
        grouped.setdefault((series_name, metric, host, device), []).append((night, float(value)))
    return grouped


def timing_nights(db: Path) -> dict[tuple[str, str], dict[tuple[str, str], list[float]]]:
    """The stored medians (isolated and sustained), night by night: (series, metric) -> (host, device) -> values."""
    with _open(db) as con:
        rows = con.execute(
            f"SELECT series, metric, host, device, value FROM {_source(con)} WHERE metric IN "
            "('median_us', 'sustained median_us') ORDER BY night"
        ).fetchall()
    nights: dict[tuple[str, str], dict[tuple[str, str], list[float]]] = {}
    for series_name, metric, host, device, value in rows:
        nights.setdefault((series_name, metric), {}).setdefault((host, device), []).append(float(value))
    return nights
