"""A child that runs user code is done when it says so or when it exits, whatever the user's code leaves running.

The faults (each hung the harness before the child's end was looked for): a kernel module that starts a non-daemon
thread at import kept ``harness run -n 0``'s import child from exiting after its answer; one whose ``atexit`` handler
never returns did the same to ``harness validate``; a callback or an inputs function that starts a process in a
session of its own and then ends its process with ``os._exit`` left that process holding the child's output open,
so the harness waited for the call's whole limit (120 s) and the process outlived the harness. Every process the
user's code starts is found by a variable in its environment (inherited across sessions); none may be left.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import DATA, run_cli, tagged_processes, write_matrix

#: longer than any grace the harness gives, far shorter than the limits a hang used to run into
PROMPT_S = 45

#: the processes as every user's run starts them: fresh interpreters, whose exit waits for threads and runs atexit
#: handlers (a child forked by the suite's zygotes ends with ``os._exit``); the detached-process tests fork as the
#: suite does: the tag and the exit watch are the same either way
FRESH = pytest.mark.usefixtures("no_zygote")


def _tagged(tag: str) -> list[int]:
    return tagged_processes(tag)


def _gone(tag: str, within: float = 5.0) -> list[int]:
    end = time.monotonic() + within
    while _tagged(tag) and time.monotonic() < end:
        time.sleep(0.1)
    return _tagged(tag)


@pytest.fixture()
def tagged_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A variable every process of the command inherits, generous call limits (the command must end on its own,
    long before them) and a cache of its own (a module's facts read by another test would spare its import)."""
    tag = uuid.uuid4().hex
    yield {"USER_CODE_ENDS_TEST": tag, "HARNESS_CALLBACK_TIMEOUT_S": "150", "HARNESS_IMPORT_TIMEOUT_S": "150",
           "HARNESS_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    for pid in _tagged(tag):  # a failed test leaves nothing running either
        os.kill(pid, signal.SIGKILL)


def _matrix(tmp_path: Path) -> Path:
    return write_matrix(
        tmp_path / "m.yaml",
        f"name: ending\ntargets: [h100]\nkernels:\n  ending:\n    source: {DATA / 'ending_kernel.py'}:SPEC\n"
        "    dtypes: [fp32]\n    shapes: [{N: 64}]\n    interpret: false\n",
    )


def _timed(*args: str, env: dict[str, str], cwd: Path | None = None) -> tuple[object, float]:
    started = time.monotonic()
    proc = run_cli(*args, env=env, cwd=cwd, timeout=200)
    return proc, time.monotonic() - started


@FRESH
def test_a_non_daemon_thread_at_import_does_not_hold_a_run(tmp_path: Path, tagged_env: dict[str, str]) -> None:
    env = {**tagged_env, "ENDING_KERNEL": "thread"}
    proc, took = _timed("run", str(_matrix(tmp_path)), "--out", str(tmp_path / "run"), "-n", "0", "--static-only",
                        env=env)  # fmt: skip
    assert proc.returncode == 0 and took < PROMPT_S, (took, proc.stdout[-1500:], proc.stderr[-1500:])
    assert '"status": "ok"' in (tmp_path / "run" / "records.jsonl").read_text()  # its record was written
    assert _gone(tagged_env["USER_CODE_ENDS_TEST"]) == []


@FRESH
def test_an_atexit_handler_that_never_returns_does_not_hold_validate(
    tmp_path: Path, tagged_env: dict[str, str]
) -> None:
    proc, took = _timed("validate", str(_matrix(tmp_path)), env={**tagged_env, "ENDING_KERNEL": "atexit"})
    assert proc.returncode == 0 and took < PROMPT_S, (took, proc.stdout[-1500:], proc.stderr[-1500:])
    assert _gone(tagged_env["USER_CODE_ENDS_TEST"]) == []


def test_a_detached_process_neither_stalls_the_probe_nor_outlives_it(
    tmp_path: Path, tagged_env: dict[str, str]
) -> None:
    proc, took = _timed("validate", str(_matrix(tmp_path)), env={**tagged_env, "ENDING_KERNEL": "detach-probe"})
    assert proc.returncode == 2 and took < PROMPT_S, (took, proc.stdout[-1500:], proc.stderr[-1500:])
    assert "exit code 1" in proc.stdout + proc.stderr, proc.stdout[-1500:]  # its exit said, not a hang at the limit
    assert _gone(tagged_env["USER_CODE_ENDS_TEST"]) == []


def test_a_detached_process_neither_stalls_a_worker_nor_outlives_it(tmp_path: Path, tagged_env: dict[str, str]) -> None:
    env = {**tagged_env, "ENDING_KERNEL": "detach-worker"}
    proc, took = _timed("run", str(_matrix(tmp_path)), "--out", str(tmp_path / "run"), "-n", "0", "--static-only",
                        env=env)  # fmt: skip
    assert proc.returncode == 1 and took < PROMPT_S, (took, proc.stdout[-1500:], proc.stderr[-1500:])
    assert "worker died (exit code 1)" in (tmp_path / "run" / "records.jsonl").read_text()
    assert _gone(tagged_env["USER_CODE_ENDS_TEST"]) == []


def test_a_detached_process_neither_stalls_a_capture_nor_outlives_it(
    tmp_path: Path, tagged_env: dict[str, str]
) -> None:
    matrix = write_matrix(
        tmp_path / "c.yaml",
        f"name: ending\ntargets: [h100]\ncompiled:\n  ending:\n    fn: {DATA / 'compiled' / 'ending_inputs.py'}:double\n"
        f"    inputs: {DATA / 'compiled' / 'ending_inputs.py'}:detached_inputs\n"
        "    shapes: [{N: 1024}]\n    dtypes: [fp32]\n",
    )
    proc, took = _timed("compiled", str(matrix), "--out", str(tmp_path / "out"), env=tagged_env)
    assert proc.returncode == 2 and took < PROMPT_S, (took, proc.stdout[-1500:], proc.stderr[-1500:])
    assert "ended the process (exit code 1)" in proc.stderr, proc.stderr[-1500:]
    assert _gone(tagged_env["USER_CODE_ENDS_TEST"]) == []
