"""The compile zygote (:mod:`harness.execution.zygote`): a forked worker builds what a fresh one builds, fails and
ends as a fresh one does, and is refused wherever a fork could differ from a fresh start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import Zygote
from helpers import REPO, run_static, small_matrix, write_matrix
from test_isolation import _job

from harness.execution import zygote
from harness.execution.pool import Worker


def _parent(pid: int) -> int:
    return int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("PPid:"))
               .split()[1])  # fmt: skip


def _children_cpu(pid: int) -> float:
    """CPU seconds of the children ``pid`` has reaped (``/proc``'s cutime + cstime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def _ready(z: Zygote) -> None:
    deadline = time.monotonic() + 120
    while not os.path.exists(z.address):
        assert time.monotonic() < deadline, "the suite's zygote never opened its socket"
        time.sleep(0.1)


def test_a_forked_run_builds_the_very_binaries_and_records_of_a_fresh_one(
    tmp_path: Path, compile_zygote: Zygote
) -> None:
    _ready(compile_zygote)
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("zygote"))
    runs = {}
    before = _children_cpu(compile_zygote.pid)
    runs["forked"] = run_static(matrix, tmp_path / "forked", env={"TRITON_CACHE_DIR": str(tmp_path / "tc1")})
    assert _children_cpu(compile_zygote.pid) > before  # its compile worker was the zygote's child
    runs["fresh"] = run_static(
        matrix, tmp_path / "fresh", env={"TRITON_CACHE_DIR": str(tmp_path / "tc2"), zygote.ENV: ""}
    )
    docs = {k: json.loads((tmp_path / k / "results.json").read_text())["records"] for k in runs}
    assert len(docs["forked"]) == len(docs["fresh"]) == 2
    for a, b in zip(docs["forked"], docs["fresh"]):
        for key in (
            "status",
            "fits",
            "resources",
            "flags",
            "specialisation",
            "kernel_hash",
            "cache_key",
            "compile_cache",
        ):
            assert a[key] == b[key], key
        assert {k: v["sha256"] for k, v in a["artifacts"].items()} == {
            k: v["sha256"] for k, v in b["artifacts"].items()
        }


def test_a_forked_worker_aborts_hangs_and_is_replaced_as_a_fresh_one(tmp_path: Path, compile_zygote: Zygote) -> None:
    """tests/test_isolation.py's sequence, through the zygote: the abort's signal comes back through it, a hung
    compile is killed at its limit, and each replacement is forked again."""
    _ready(compile_zygote)
    worker = Worker("compile", dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert worker.request("compile", _job(1000, tmp_path), timeout=600)["status"] == "ok"
        assert isinstance(worker.proc, zygote.ZygoteChild) and _parent(worker.proc.pid) == compile_zygote.pid
        crash = worker.request("compile", _job(64, tmp_path), timeout=600)
        assert crash["status"] == "crash" and "SIGABRT" in crash["error"]
        raised = worker.request("compile", _job(16, tmp_path), timeout=600)
        assert raised["status"] == "error" and "N=16 is refused" in raised["error"]
        hung = worker.request("compile", _job(32, tmp_path), timeout=3)
        assert hung["status"] == "timeout"
        after = worker.request("compile", _job(1002, tmp_path), timeout=600)
        assert after["status"] == "ok" and worker.started == 3
        assert isinstance(worker.proc, zygote.ZygoteChild) and _parent(worker.proc.pid) == compile_zygote.pid
    finally:
        worker.close()


def test_a_forked_worker_ends_with_the_run_that_asked_for_it(compile_zygote: Zygote) -> None:
    _ready(compile_zygote)
    script = (
        "import os, sys, time\n"
        "from harness.execution.pool import Worker\n"
        "w = Worker('compile')\n"
        "print(w.request('ping', {}, 60)['pid'], type(w.proc).__name__, flush=True)\n"
        "time.sleep(600)\n"
    )
    run = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO,
                           env=dict(os.environ, PYTHONPATH=str(REPO)))  # fmt: skip
    assert run.stdout is not None
    pid, kind = run.stdout.readline().split()
    assert kind == "ZygoteChild"
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "the forked worker outlived its run"


def test_what_a_fork_could_get_wrong_is_started_fresh(tmp_path: Path, compile_zygote: Zygote) -> None:
    _ready(compile_zygote)
    shadow = tmp_path / "shadow" / "triton"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not the Triton the zygote holds')\n")
    base = dict(os.environ, PYTHONPATH=str(REPO))
    with open(os.devnull, "wb") as log:
        forked = zygote.start(base, log)
        assert forked is not None
        forked.stdin.close()
        assert forked.wait(timeout=30) == 0  # its input closed: the worker loop ends, exit 0 comes back
        for env in (
            dict(base, TORCH_LOGS="+dynamo"),  # read when torch is imported
            dict(base, PYTHONPATH=f"{tmp_path / 'shadow'}{os.pathsep}{REPO}"),  # another triton first on the path
            dict(base, **{zygote.ENV: str(tmp_path / "no-such-socket")}),
        ):
            assert zygote.start(env, log) is None
    worker = Worker("compile", dict(base, TORCH_LOGS="+dynamo"))
    try:  # refused, so started as every user's worker is
        assert worker.request("ping", {}, 120)["pid"] and isinstance(worker.proc, subprocess.Popen)
    finally:
        worker.close()
