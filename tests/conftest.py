"""Fixtures shared by the CPU tests (helpers live in helpers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The harness's result cache (harness.execution.result_cache) would let one test's builds answer another's: every
# test runs its jobs unless it turns the cache on itself (tests/test_result_cache.py, the smoke matrix's warm run).
os.environ["HARNESS_RESULT_CACHE"] = "0"

REPO = Path(__file__).resolve().parent.parent


class Zygote(NamedTuple):
    address: str
    pid: int


@pytest.fixture(scope="session", autouse=True)
def compile_zygote() -> Iterator[Zygote]:
    """One warm zygote per test process (harness.execution.zygote): the suite's ~250 ``harness run`` processes
    fork their compile workers from it instead of importing torch in each. It is announced as soon as it is
    started; a run that finds it not ready yet starts fresh workers, as a run without one does. The tests of
    worker faults, lifelines and isolation turn it off (``no_zygote``) so that the path every user runs stays the
    one they check; tests/test_zygote.py checks the forked path against it."""
    folder = tempfile.mkdtemp(prefix="hz-")
    address = os.path.join(folder, "s")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.execution.zygote", address],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    os.environ["HARNESS_ZYGOTE"] = address
    yield Zygote(address, proc.pid)
    os.environ.pop("HARNESS_ZYGOTE", None)
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture()
def no_zygote(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs in this test start every worker as a fresh interpreter, as a user's do."""
    monkeypatch.delenv("HARNESS_ZYGOTE", raising=False)


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh harness cache, so resource figures are really re-derived from the tools."""
    cache = tmp_path / "harness-cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    return cache
