"""A run directory is owned by one run at a time, and a finished one is never overwritten by accident.

- A lock file (``.harness.lock``, an ``fcntl`` lock held for the run's lifetime) refuses a
  second run into the same directory, naming the other run's pid, host and start.
- A directory that already holds records is refused unless the run resumes it (keeping
  every finished record and running only the missing cases) or is forced (starting over).
- Default directory names carry the UTC time and a random suffix, so two runs started in
  the same second never share one.
"""
from __future__ import annotations

import fcntl
import json
import os
import secrets
import socket
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from harness.records import Record, complete_cases, load_results

LOCK_NAME = ".harness.lock"
RUN_FILES = (LOCK_NAME, "records.jsonl", "results.json", "report.md")


class RunDirError(Exception):
    """The directory cannot be used for this run; ``str()`` says why and what to do."""


def default_name(root: Path = Path("runs")) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return root / f"{stamp}-{secrets.token_hex(3)}"


def check_usable(out: Path) -> None:
    """``--out`` must be a directory we can create and write, not a file."""
    if out.exists() and not out.is_dir():
        raise RunDirError(f"--out {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not any((out / name).exists() for name in RUN_FILES):
        raise RunDirError(f"--out {out} is a directory with other content and no harness run: give a new or empty "
                          "directory (a run writes results, records, a report and artifacts there)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"--out {out}: cannot create it: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise RunDirError(f"--out {out}: not writable")


class RunLock:
    """Holds ``out/.harness.lock`` for the lifetime of a run (released when the process ends, however it ends)."""

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_NAME
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip()
            fh.close()
            try:
                info = json.loads(holder)
                who = f"pid {info.get('pid')} on {info.get('host')}, started {info.get('start')}"
            except (json.JSONDecodeError, AttributeError):
                who = "another process"
            raise RunDirError(f"{self.path.parent} is in use by another harness run ({who}); "
                              "wait for it or choose another --out") from None
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "start": datetime.now(timezone.utc).isoformat(timespec="seconds")}))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def has_records(out: Path) -> bool:
    jsonl = out / "records.jsonl"
    return jsonl.is_file() and jsonl.stat().st_size > 0


def resume_state(out: Path, matrix_hash: str | None) -> tuple[dict[str, Any], set[str], list[Record]]:
    """The interrupted run in ``out``: its run info, the cases it finished and their records.

    Refuses a resume under another matrix than the one the run started with (its cases
    and ids would not line up). Records of a case a kill cut short are dropped, so
    that case runs again.
    """
    run, records = load_results(out)
    recorded = (run.get("matrix") or {}).get("sha256")
    if matrix_hash and recorded and recorded != matrix_hash:
        raise RunDirError(f"--resume {out}: the matrix {(run.get('matrix') or {}).get('path')} changed since that run "
                          "started; resume with the same matrix, or start a new run")
    done, kept = complete_cases(records)
    return run, done, kept


def prepare(out: Path, resume: bool, force: bool) -> RunLock:
    """Check and lock ``out`` for a run; raise :class:`RunDirError` with the reason when it cannot be used."""
    check_usable(out)
    lock = RunLock(out)
    lock.acquire()
    try:
        if resume and not has_records(out):
            raise RunDirError(f"--resume {out}: no records to resume from (records.jsonl is missing or empty)")
        if not resume and not force and has_records(out):
            raise RunDirError(f"{out} already holds a run's records: use --resume to finish only what is missing, "
                              "or --force to start over (its records are replaced)")
    except RunDirError:
        lock.release()
        raise
    return lock
