"""What every command shares: exit codes, the one-line error, writing a requested output, reading a run."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.model.records import Record
from harness.model.run_info import RunInfo
from harness.results.store import ResultsFileError, load_results

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL, EXIT_NOTHING = 0, 1, 2, 3, 4
EXIT_FINDINGS = 5  # harness run --fail-on: the run has configs of a kind it was told to fail on
_PYTEST_TO_EXIT = {0: EXIT_OK, 1: EXIT_FAILED, 2: EXIT_INTERNAL, 3: EXIT_INTERNAL, 4: EXIT_INPUT, 5: EXIT_NOTHING}


def err(message: str) -> None:
    """One line to stderr, prefixed; a name or path in it cannot drive the terminal (controls and bidi dropped)."""
    from harness.render.escaping import CONTROL

    print(f"harness: {CONTROL.sub('', message)}", file=sys.stderr)


def default_matrix() -> Path:
    """``matrices/smoke.yaml`` of the checkout in the working directory, else of the harness's own tree."""
    from harness.intake.loader import REPO_MATRICES

    here = Path.cwd() / "matrices" / "smoke.yaml"
    return here if here.is_file() else REPO_MATRICES / "smoke.yaml"


def write_output(path: Path, text: str, option: str) -> bool:
    """Write a report file the user asked for (its folder made); False after a one-line error."""
    from harness.support.safe_files import write_atomic

    try:
        if path.is_dir():
            raise IsADirectoryError(21, "is a directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        err(f"{option} {path}: cannot write it: {exc.strerror or exc}")
        return False
    return True


def load_run(d: str) -> tuple[RunInfo, list[Record]] | None:
    """A run directory's (or results.json's) run info and records; None after a one-line error."""
    try:
        return load_results(Path(d))
    except ResultsFileError as exc:
        err(str(exc))
        return None


def shard_dirs(d: str) -> list[str]:
    """A night's folder (no results.json of its own, run directories in it: one per shard) as those directories;
    any other path as itself."""
    path = Path(d)
    if not path.is_dir() or (path / "results.json").exists():
        return [d]
    found = sorted(str(p.parent) for p in path.glob("*/results.json"))
    return found or [d]


def load_night(d: str) -> tuple[RunInfo, list[Record]] | None:
    """A run directory, or a night's folder of shard runs taken as one run (:mod:`harness.analysis.shard_coverage`);
    None after one-line errors, a night that misses or repeats a shard among them."""
    from harness.analysis.shard_coverage import combine, is_sharded

    loaded = []
    for one in shard_dirs(d):
        stored = load_run(one)
        if stored is None:
            return None
        loaded.append((one, *stored))
    if not is_sharded(loaded) and len(loaded) == 1:
        return loaded[0][1], loaded[0][2]
    night = combine(loaded)
    for note in night.notes:
        err(f"note: {note}")
    if night.problems:
        for problem in night.problems:
            err(f"{d}: night incomplete: {problem}")
        return None
    return night.run, night.records


def shard_ok(text: str) -> bool:
    """``--shard I/N`` or ``auto`` names a shard that exists (read as the run will read it); False after one line."""
    import os

    from harness.matrix import shards

    try:
        shards.parse(text, os.environ)
    except shards.ShardError as exc:
        err(str(exc))
        return False
    return True
