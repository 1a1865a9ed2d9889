"""A run directory is owned by one run at a time, and a finished one is never overwritten by accident.

- A lock file (``.harness.lock``, an ``fcntl`` lock held for the run's lifetime) refuses a
  second run into the same directory, naming the other run's pid, host and start.
- A directory that already holds records is refused unless the run resumes it (keeping
  every finished record and running only the missing cases) or is forced (starting over).
- Default directory names carry the UTC time and a random suffix, so two runs started in
  the same second never share one.
- The harness writes only into a directory it created, an empty one, or one holding its
  own run marker (``.harness-run``, written whole when the directory is claimed). Any other
  directory, an archived run without the marker or a user's folder with a file called
  ``report.md`` among others, is refused even with ``--force``; ``--force`` removes only
  the files a run writes. Files are opened without following links (:mod:`harness.support.safe_files`).
- A command holds the directory (:func:`hold`: checked, locked and marked) before it writes its first byte there
  or runs any user code: a ``harness compiled`` refused by another run's lock has written nothing, a folder of
  the user's is refused before anything in it is touched, and one that cannot be written is refused before a
  user's inputs function is called. The run's own session then takes that same hold (:func:`prepare`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import socket
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from harness.model.records import Record
from harness.model.run_info import RunInfo, Selection
from harness.results.store import complete_cases, load_results
from harness.support import safe_files

LOCK_NAME = ".harness.lock"
#: a failed capture's whole traceback (harness.intake.inductor.compiled), kept before the run has claimed the directory
TRACEBACKS_DIR = "tracebacks"
#: the entries ``harness compiled`` captured, as the run matrix it then runs (written before the run claims the folder)
COMPILED_MATRIX = "compiled.yaml"
MARKER_NAME = ".harness-run"
MARKER_KIND = "triton-portability-harness run directory"
#: what a run writes at the top of its directory (``--force`` removes these and ``artifacts/``, nothing else)
RUN_FILES = (LOCK_NAME, "records.jsonl", "results.json", "report.md", "report.html", "compiled.md", "compiled.html")
ARTIFACTS = "artifacts"


class RunDirError(Exception):
    """The directory cannot be used for this run; ``str()`` says why and what to do."""


def default_name(root: Path = Path("runs")) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return root / f"{stamp}-{secrets.token_hex(3)}"


def has_marker(out: Path) -> bool:
    """Whether ``out`` holds the harness's own, complete run marker (a regular file, not a link)."""
    marker = out / MARKER_NAME
    if marker.is_symlink() or not marker.is_file():
        return False
    try:
        info = json.loads(safe_files.read_bytes(marker, 1 << 16, "run marker"))
    except (safe_files.InputFileError, ValueError):
        return False
    return isinstance(info, dict) and info.get("kind") == MARKER_KIND


def check_usable(out: Path) -> None:
    """``--out`` must be a new or empty directory, or one a harness run marked as its own."""
    try:
        _check_usable(out)
    except OSError as exc:  # a name too long to look up, a loop of links, a folder that cannot be listed
        shown = str(out) if len(str(out)) <= 120 else str(out)[:100] + "..."
        raise RunDirError(f"--out {shown}: cannot use it: {exc.strerror or exc}") from None


def _check_usable(out: Path) -> None:
    if out.is_symlink() and not out.exists():
        raise RunDirError(f"--out {out} is a link to nothing")
    if out.exists() and not out.is_dir():
        raise RunDirError(f"--out {out} exists and is not a directory")
    if out.is_dir() and not has_marker(out) and any(not _own_file(p) for p in out.iterdir()):
        found = sorted(p.name for p in out.iterdir() if not _own_file(p))
        shown = ", ".join(found[:3]) + (", ..." if len(found) > 3 else "")
        raise RunDirError(
            f"--out {out} holds files a harness run did not write ({shown}; no "
            f"{MARKER_NAME} marker): the harness writes only into a new or empty directory or one of "
            "its own runs, --force included: choose another --out"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"--out {out}: cannot create it: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise RunDirError(f"--out {out}: not writable")


def _own_file(path: Path) -> bool:
    """The harness's own lock file (left by a run refused before it marked the directory) is never a foreign file.
    Everything else the harness writes (``harness compiled``'s run matrix, a failed capture's tracebacks) is written
    after the directory is marked (:func:`hold`): a ``compiled.yaml`` in an unmarked folder is the user's."""
    return not path.is_symlink() and path.name == LOCK_NAME and path.is_file()


def resume_refusal(out: Path) -> str:
    """Why ``--resume out`` cannot resume (a command that works named), or ``""``. A directory the harness marked
    but that holds no record yet (a run stopped before its first case finished) can: it starts over, as nothing
    finished is there to keep."""
    if has_records(out):
        return ""
    if not out.is_dir() or not any(not _own_file(p) for p in out.iterdir()):
        return (
            f"--resume {out}: no run there to resume (the directory is missing or empty): start one with "
            f"harness run MATRIX --out {out}"
        )
    return ""  # a directory not marked as a run is refused by check_usable(), as for any run


def claim(out: Path) -> None:
    """Mark ``out`` as this harness's run directory (kept across resumes)."""
    if has_marker(out):
        return
    try:
        safe_files.write_atomic(
            out / MARKER_NAME,
            json.dumps(
                {
                    "kind": MARKER_KIND,
                    "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "host": socket.gethostname(),
                    "pid": os.getpid(),
                }
            )
            + "\n",
        )
    except OSError as exc:
        raise RunDirError(f"--out {out}: cannot write the run marker: {exc.strerror or exc}") from None


def clear_run_files(out: Path) -> None:
    """``--force``: remove what an earlier run wrote (its records, results, reports, artifacts); nothing else."""
    for name in (n for n in RUN_FILES if n != LOCK_NAME):  # the lock is held by this very run
        path = out / name
        if path.is_symlink() or path.is_file():
            path.unlink()
    for tmp in out.glob(".*.tmp"):
        if tmp.is_symlink() or tmp.is_file():
            tmp.unlink()
    artifacts = out / ARTIFACTS
    if artifacts.is_symlink():
        artifacts.unlink()
    elif artifacts.is_dir():
        shutil.rmtree(artifacts)


class RunLock:
    """Holds ``out/.harness.lock`` for the lifetime of a run (released when the process ends, however it ends).
    Taken once per process and directory: :func:`hold` and :func:`prepare` of one command share it, and it is let
    go when the last of them releases it."""

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_NAME
        self._fh: IO[str] | None = None
        self.holders = 0
        self.made = False  # the directory was made for this run (:func:`abandon` may remove it again)

    def acquire(self) -> None:
        try:
            fh = safe_files.open_nofollow(self.path, "a+")  # held until release()
        except OSError as exc:
            raise RunDirError(
                f"{self.path}: cannot use the lock file: {exc.strerror or exc} (a link or "
                "something else is in its place)"
            ) from None
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
            raise RunDirError(
                f"{self.path.parent} is in use by another harness run ({who}); wait for it or choose another --out"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "start": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                }
            )
        )
        fh.flush()
        self._fh = fh
        self.holders = 1

    def release(self) -> None:
        self.holders = max(0, self.holders - 1)
        if self._fh is not None and self.holders == 0:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
            _HELD.pop(self.path.parent.resolve(), None)


#: the directories this process holds (:func:`hold`), by resolved path
_HELD: dict[Path, RunLock] = {}


def hold(out: Path, resume: bool = False, force: bool = False) -> RunLock:
    """Check, lock and mark ``out`` before anything is written there or any user code runs; raise
    :class:`RunDirError` with the reason (one line) when it cannot be used. Nothing is removed here: ``--force``
    clears the earlier run's files only once the run starts (:func:`prepare`), after the matrix was read."""
    held = _HELD.get(out.resolve()) if out.exists() else None
    if held is not None:
        held.holders += 1
        return held
    if resume and resume_refusal(out):
        raise RunDirError(resume_refusal(out))  # before the directory is made or locked: nothing is left behind
    jsonl = out / "records.jsonl"
    if not jsonl.is_symlink() and jsonl.exists() and not jsonl.is_file():  # a link is replaced, never followed
        raise RunDirError(
            f"{jsonl} is not a regular file (a directory or a device): the run's records cannot be kept there; "
            "remove it, or name another --out"
        )
    made = not out.exists()
    check_usable(out)
    lock = RunLock(out)
    try:
        lock.acquire()
    except RunDirError:
        if made:
            with contextlib.suppress(OSError):
                out.rmdir()
        raise
    try:
        _refuse_a_finished_run(out, resume, force)
        claim(out)
    except RunDirError:
        lock.release()
        raise
    lock.made = made
    _HELD[out.resolve()] = lock
    return lock


def _refuse_a_finished_run(out: Path, resume: bool, force: bool) -> None:
    """A directory that already holds a run is taken only to resume it or to start over."""
    started = has_records(out) or any((out / name).exists() for name in ("results.json", "report.md", ARTIFACTS))
    if not resume and not force and started:
        raise RunDirError(
            f"{out} already holds a run: use --resume to finish only what is missing, "
            "or --force to start over (its records, reports and artifacts are removed)"
        )


def abandon(lock: RunLock) -> None:
    """A command refused after :func:`hold` (a matrix that does not check out): the directory it made goes again,
    where it holds nothing but the harness's marker and lock (a failed capture's tracebacks, named in the refusal's
    lines, keep it)."""
    out = lock.path.parent
    try:
        if not lock.made or set(os.listdir(out)) - {MARKER_NAME, LOCK_NAME}:
            return
        (out / MARKER_NAME).unlink()
        lock.path.unlink()
        out.rmdir()
    except OSError:
        pass


def has_records(out: Path) -> bool:
    jsonl = out / "records.jsonl"
    return jsonl.is_file() and jsonl.stat().st_size > 0


def changed_cases(before: tuple[Selection, ...], now: tuple[Selection, ...]) -> str:
    """What a matrix edit changed in what a run builds, in words (" (…)", or "" when the selections agree): the
    cases the run selected that the matrix no longer gives, those it now gives for the run's kernels, and the
    cases whose configs changed; three named, then how many more."""

    def key(s: Selection) -> str:
        return f"{s.kernel} {s.dtype} {json.dumps(dict(s.shape or {}), sort_keys=True)} {s.target}@{s.environment}"

    old = {key(s): s for s in before}
    new = {key(s): s for s in now if s.kernel in {b.kernel for b in before}}
    said = [f"no longer selects {k}" for k in old if k not in new]
    said += [f"now also selects {k}" for k in new if k not in old]
    said += [f"other configs for {k}" for k in old if k in new and old[k].configs != new[k].configs]
    if not said:
        return ""
    more = f"; {len(said) - 3} more" if len(said) > 3 else ""
    return " (" + "; ".join(said[:3]) + more + ")"


def resume_state(
    out: Path, matrix_hash: str | None, selection: tuple[Selection, ...] = ()
) -> tuple[RunInfo, set[str], list[Record]]:
    """The interrupted run in ``out``: its run info, the cases it finished and their records.

    Refuses a resume under another matrix than the one the run started with (its cases
    and ids would not line up). Records of a case a kill cut short are dropped, so
    that case runs again.
    """
    run, records = load_results(out)
    recorded = run.matrix.sha256 if run.matrix else None
    if matrix_hash and recorded != matrix_hash:
        said = "changed since that run started" if recorded else "is not recorded in that run (it cannot be checked)"
        raise RunDirError(
            f"--resume {out}: the matrix {run.matrix.path if run.matrix else '(unknown)'} {said}"
            f"{changed_cases(run.selected or (), selection)}; resume with the same matrix, or start a new run"
        )
    done, kept = complete_cases(records)
    return run, done, kept


def prepare(out: Path, resume: bool, force: bool) -> RunLock:
    """Check and lock ``out`` for a run; raise :class:`RunDirError` with the reason when it cannot be used. A resume
    of a run that finished no case yet starts it over (:func:`resume_refusal`)."""
    lock = hold(out, resume, force)  # the command's own hold where it took one first
    try:
        if resume and not has_records(out):  # claimed, stopped before its first record: nothing to keep
            resume, force = False, True
        _refuse_a_finished_run(out, resume, force)
        claim(out)
        if force and not resume:
            try:
                clear_run_files(out)
            except OSError as exc:
                raise RunDirError(f"--force {out}: cannot remove the earlier run's files: {exc}") from None
    except RunDirError:
        lock.release()
        raise
    return lock
