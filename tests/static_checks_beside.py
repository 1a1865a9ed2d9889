"""ci/static_checks.sh (ruff's lint and format check, mypy) run beside the tests, in the background.

mypy takes about 20 CPU-seconds on a fresh clone without a cache, under a second with one. Its cache is kept in the
user's cache folder (``~/.cache/harness-suite/mypy``), not in the checkout, so that a fresh clone on a machine that
ran the suite before checks again only what changed: mypy's incremental mode compares each file's contents with what
the cache was built from (a clone's new file times alone do not count as a change) and re-checks what changed and
whatever depends on it. Run before the tests (as ``ci/prepare_tests.sh`` did), it held
both cores of a 2-core CI machine; started as soon as a session has collected tests/test_static_checks.py, in a
process of its own at the lowest priority, it takes the moments the tests leave a core idle (a timeout they
provoke, a child they wait on), and the module, run last, reads its verdict. ``python
tests/static_checks_beside.py FOLDER`` writes ``log`` then ``rc`` into FOLDER; the module runs the script itself
where nothing started it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import beside

REPO = Path(__file__).resolve().parent.parent
#: names the folder into which tests/conftest.py started the checks when the session collected the module
ENV = "HARNESS_SUITE_STATIC"


def _cache() -> Path:
    """mypy's cache for the suite's checks, kept across checkouts (``MYPY_CACHE_DIR`` of the caller wins)."""
    if os.environ.get("MYPY_CACHE_DIR"):
        return Path(os.environ["MYPY_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "harness-suite" / "mypy"


def run(folder: Path) -> None:
    """The checks with this interpreter (its ruff and mypy): their output in ``log``, then their exit code in ``rc``."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "log", "wb") as log:
        proc = subprocess.run(
            ["bash", "ci/static_checks.sh"],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(
                os.environ, PYTHON=os.environ.get("HARNESS_SUITE_PYTHON", sys.executable), MYPY_CACHE_DIR=str(_cache())
            ),
        )
    (folder / "rc.tmp").write_text(str(proc.returncode))
    (folder / "rc.tmp").replace(folder / "rc")


def start(folder: Path) -> bool:
    """Start :func:`run` into ``folder`` beside the suite, once per folder (tests/beside.py); True if this call
    started it."""
    return beside.start(__file__, folder)


def verdict(folder: Path, timeout: float = 900) -> tuple[int, str]:
    """The checks' exit code and output once they are done (waiting up to ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not (folder / "rc").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the static checks in {folder} did not finish within {timeout:g} s")
        time.sleep(0.5)
    return int((folder / "rc").read_text()), (folder / "log").read_text(errors="replace")


if __name__ == "__main__":
    beside.lowest_priority()  # its CPU is the tests' idle moments, never a compile's
    run(Path(sys.argv[1]))
