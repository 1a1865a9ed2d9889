"""Fixtures shared by the CPU tests (helpers live in helpers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import CLI_ZYGOTE, Zygote, Zygotes  # noqa: E402 - tests/ on the path first

# The harness's result cache (harness.execution.result_cache) would let one test's builds answer another's: every
# test runs its jobs unless it turns the cache on itself (tests/test_result_cache.py, the smoke matrix's warm run).
os.environ["HARNESS_RESULT_CACHE"] = "0"

REPO = Path(__file__).resolve().parent.parent


def _start_zygote(folder: str, role: str) -> tuple[Zygote, subprocess.Popen[bytes]]:
    address = os.path.join(folder, role)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.execution.zygote", address, role],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    return Zygote(address, proc.pid), proc


@pytest.fixture(scope="session", autouse=True)
def zygotes() -> Iterator[Zygotes]:
    """Two warm zygotes per test process (harness.execution.zygote): the suite's ~250 ``harness`` command lines
    are forked by the ``cli`` one (tests/helpers.py's ``run_cli``) and their compile workers by the ``compile`` one,
    instead of each importing pytest, the harness and torch again. Each is announced as soon as it is started; a
    run that finds one not ready yet starts a fresh interpreter, as a run without one does. The tests of faults,
    signals, lifelines and isolation turn both off (``no_zygote``) so that the path every user runs stays the one
    they check; tests/test_zygote.py checks the forked path against it."""
    folder = tempfile.mkdtemp(prefix="hz-")
    compile_one, compile_proc = _start_zygote(folder, "compile")
    cli, cli_proc = _start_zygote(folder, "cli")
    os.environ["HARNESS_ZYGOTE"] = compile_one.address
    os.environ[CLI_ZYGOTE] = cli.address
    yield Zygotes(compile_one, cli)
    for name in ("HARNESS_ZYGOTE", CLI_ZYGOTE):
        os.environ.pop(name, None)
    for proc in (compile_proc, cli_proc):
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture()
def no_zygote(monkeypatch: pytest.MonkeyPatch) -> None:
    """Command lines and workers in this test start as fresh interpreters, as a user's do."""
    monkeypatch.delenv("HARNESS_ZYGOTE", raising=False)
    monkeypatch.delenv(CLI_ZYGOTE, raising=False)


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh harness cache, so resource figures are really re-derived from the tools."""
    cache = tmp_path / "harness-cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    return cache
