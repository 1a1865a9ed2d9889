"""The zygotes (:mod:`harness.support.zygote`): a forked command line and compile worker give what fresh ones
give, a forked worker fails and ends as a fresh one does, and a fork is refused wherever it could differ from a
fresh start."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, Zygote, Zygotes, run_cli, small_matrix, write_matrix
from test_isolation import _job

from harness.execution.pool import Worker
from harness.support import zygote, zygote_client


def _parent(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("PPid:")).split()[1])


def _children_cpu(pid: int) -> float:
    """CPU seconds of the children ``pid`` has reaped (``/proc``'s cutime + cstime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def _has_gpu() -> bool:
    """A GPU host checks correctness on its GPU, not in the interpreter."""
    import torch

    return bool(torch.cuda.is_available())


def _ready(*each: Zygote) -> None:
    deadline = time.monotonic() + 120
    for z in each:
        while not os.path.exists(z.address):
            assert Path(f"/proc/{z.pid}").exists(), f"the suite's zygote {z.address} ended before it served"
            assert time.monotonic() < deadline, f"the suite's zygote {z.address} never opened its socket"
            time.sleep(0.1)


def test_a_forked_run_gives_the_records_binaries_and_output_of_a_fresh_one(
    tmp_path: Path, zygotes: Zygotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ready(*zygotes)
    # builds on both vendors and the interpreter's check of each config, so every role is asked
    matrix = write_matrix(
        tmp_path / "m.yaml", small_matrix("zygote").replace("interpret: false", "interpret: [{N: 1000}]")
    )
    before = {z.pid: _children_cpu(z.pid) for z in zygotes}
    forked = run_cli(
        "run",
        str(matrix),
        "--out",
        str(tmp_path / "forked"),
        "-n",
        "0",
        env={"TRITON_CACHE_DIR": str(tmp_path / "tc1")},
    )
    records = json.loads((tmp_path / "forked" / "results.json").read_text())["records"]
    asked = {"cli", "compile"} | ({"interpret"} if any(r["mode"] == "interpret" for r in records) else set())
    assert "interpret" in asked or _has_gpu()  # without a GPU, the interpreter checks the config
    idle = [role for role in asked if _children_cpu(getattr(zygotes, role).pid) <= before[getattr(zygotes, role).pid]]
    assert not idle, f"the zygotes of {idle} forked nothing"
    monkeypatch.delenv(zygote.ENV)
    fresh = run_cli(
        "run", str(matrix), "--out", str(tmp_path / "fresh"), "-n", "0", env={"TRITON_CACHE_DIR": str(tmp_path / "tc2")}
    )
    assert forked.returncode == fresh.returncode == 0, forked.stdout[-2000:] + fresh.stdout[-2000:]
    docs = {k: json.loads((tmp_path / k / "results.json").read_text())["records"] for k in ("forked", "fresh")}
    checks = {k: [(r["status"], r["correctness"]) for r in v if r["mode"] == "interpret"] for k, v in docs.items()}
    assert checks["forked"] == checks["fresh"] and (_has_gpu() or checks["fresh"][0][0] == "ok")
    builds = {k: [r for r in v if r["mode"] == "compile"] for k, v in docs.items()}
    assert len(builds["forked"]) == len(builds["fresh"]) == 2
    for a, b in zip(builds["forked"], builds["fresh"]):
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

    def said(proc: subprocess.CompletedProcess[str], run: str) -> list[str]:  # times and the folder's name set aside
        text = re.sub(r"\d+(\.\d+)?s\b", "T", proc.stdout.replace(str(tmp_path / run), "RUN"))
        text = text.split("= slowest ")[0] + text.split("durations < T hidden")[-1]  # ordered by time (PYTEST_ADDOPTS)
        return text.splitlines()[1:]

    assert said(forked, "forked") == said(fresh, "fresh")


def test_a_forked_command_line_exits_and_says_what_a_fresh_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = write_matrix(tmp_path / "bad.yaml", small_matrix("bad").replace("fp32", "fp33"))
    said = {}
    for how in ("forked", "fresh"):
        if how == "fresh":
            monkeypatch.delenv(zygote.ENV)
        said[how] = [(p.returncode, p.stdout, p.stderr) for p in (run_cli("validate", str(bad)), run_cli("--version"))]
    assert said["forked"] == said["fresh"] and said["fresh"][0][0] == 2


def test_a_child_that_ends_before_its_run_reads_the_pid_keeps_its_exit_status(
    zygotes: Zygotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded machine can let a forked ``harness --help`` end before its run reads the zygote's first line:
    the zygote then sends the pid and the exit status together. Both must be read (once, a buffered reader
    dropped the status with its buffer, and a run that had exited 0 or 2 read as killed, -9)."""
    _ready(zygotes.cli)
    sent = socket.send_fds

    def send_then_stall(*args: object, **kwargs: object) -> int:
        done = sent(*args, **kwargs)  # type: ignore[arg-type]
        time.sleep(1.5)  # the child exits and the zygote reaps it (it looks every 0.1 s) before the pid is read
        return done

    monkeypatch.setattr(socket, "send_fds", send_then_stall)
    proc = zygote_client.run_cli(["--help"], dict(os.environ), str(REPO), timeout=60)
    assert proc is not None and (proc.returncode, proc.stderr) == (0, ""), proc
    assert proc.stdout.startswith("usage: harness")


def test_a_forked_worker_aborts_hangs_and_is_replaced_as_a_fresh_one(tmp_path: Path, zygotes: Zygotes) -> None:
    """tests/test_isolation.py's sequence, through the zygote: the abort's signal comes back through it, a hung
    compile is killed at its limit, and each replacement is forked again."""
    _ready(zygotes.compile)
    worker = Worker("compile", dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert worker.request("compile", _job(1000, tmp_path), timeout=600)["status"] == "ok"
        assert isinstance(worker.proc, zygote_client.ZygoteChild) and _parent(worker.proc.pid) == zygotes.compile.pid
        crash = worker.request("compile", _job(64, tmp_path), timeout=600)
        assert crash["status"] == "crash" and "SIGABRT" in crash["error"]
        raised = worker.request("compile", _job(16, tmp_path), timeout=600)
        assert raised["status"] == "error" and "N=16 is refused" in raised["error"]
        hung = worker.request("compile", _job(32, tmp_path), timeout=3)
        assert hung["status"] == "timeout"
        after = worker.request("compile", _job(1002, tmp_path), timeout=600)
        assert after["status"] == "ok" and worker.started == 3
        assert isinstance(worker.proc, zygote_client.ZygoteChild) and _parent(worker.proc.pid) == zygotes.compile.pid
    finally:
        worker.close()


def test_a_forked_worker_ends_with_the_run_that_asked_for_it(tmp_path: Path, zygotes: Zygotes) -> None:
    """The run killed, its forked worker ends too, and the scratch folder the run made for it goes with it."""
    _ready(zygotes.compile)
    script = (
        "import time\n"
        "from harness.execution.pool import Worker\n"
        "w = Worker('compile')\n"
        "print(w.request('ping', {}, 60)['pid'], type(w.proc).__name__, w.scratch, flush=True)\n"
        "time.sleep(600)\n"
    )
    (tmp_path / "tmp").mkdir()
    run = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO,
                           env=dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp_path / "tmp")))  # fmt: skip
    assert run.stdout is not None
    pid, kind, scratch = run.stdout.readline().split()
    assert kind == "ZygoteChild" and Path(scratch).parent == tmp_path / "tmp" and Path(scratch).is_dir()
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "the forked worker outlived its run"
    assert not Path(scratch).exists(), "the forked worker's scratch outlived it"


def test_what_a_fork_could_get_wrong_is_started_fresh(tmp_path: Path, zygotes: Zygotes) -> None:
    _ready(*zygotes)
    shadow = tmp_path / "shadow" / "triton"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not the Triton the zygote holds')\n")
    base = dict(os.environ, PYTHONPATH=str(REPO))
    for z in zygotes:  # a fork runs what a request names: no other user may connect
        assert os.stat(z.address).st_mode & 0o077 == 0, oct(os.stat(z.address).st_mode)
    with open(os.devnull, "wb") as log:
        forked = zygote_client.ask_worker("compile", base, log)
        assert isinstance(forked, zygote_client.ZygoteChild) and forked.stdin is not None, forked
        forked.stdin.close()
        assert forked.wait(timeout=30) == 0  # its input closed: the worker loop ends, exit 0 comes back
        for env in (
            dict(base, TORCH_LOGS="+dynamo"),  # read when torch is imported
            dict(base, PYTHONPATH=f"{tmp_path / 'shadow'}{os.pathsep}{REPO}"),  # another triton first on the path
            dict(base, **{zygote.ENV: str(tmp_path / "no-such-folder")}),
        ):
            assert zygote_client.start_worker("compile", env, log) is None
        # the interpreter's zygote imported Triton under TRITON_INTERPRET=1: a worker without it is not its child
        assert zygote_client.start_worker("interpret", base, log) is None
        interpreted = zygote_client.ask_worker("interpret", dict(base, TRITON_INTERPRET="1"), log)
        assert isinstance(interpreted, zygote_client.ZygoteChild), interpreted
        assert _parent(interpreted.pid) == zygotes.interpret.pid
        assert interpreted.stdin is not None
        interpreted.stdin.close()
        assert interpreted.wait(timeout=30) == 0
    worker = Worker("compile", dict(base, TORCH_LOGS="+dynamo"))
    try:  # refused, so started as every user's worker is
        assert worker.request("ping", {}, 120)["pid"] and isinstance(worker.proc, subprocess.Popen)
    finally:
        worker.close()


def test_a_forked_probe_imports_and_fails_as_a_fresh_one(
    tmp_path: Path, zygotes: Zygotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The children that import a matrix's user modules first (harness.intake.child_probe) come from the ``probe``
    zygote: the module is imported in its child, and a callback that hangs there is the same one line, at the same
    limit, killed with its session, as in a fresh interpreter."""
    from test_user_code_isolation import COPY, SPEC

    witness = tmp_path / "importers.txt"
    module = (
        "import os\n"
        f"with open({str(witness)!r}, 'a') as _f:\n"
        "    _f.write(f'{os.getpid()} {os.getppid()} {os.getsid(0)}\\n')\n"
        + COPY.split("import os", 1)[-1]
        + "\n\ndef _hangs(shape, config):\n    time.sleep(3600)\n\n"
        + SPEC.replace("EXTRA", ", config_ok=_hangs")
    )
    (tmp_path / "user_kernel.py").write_text(module)
    matrix = write_matrix(
        tmp_path / "m.yaml",
        "name: user\ntargets: [h100]\nkernels:\n  k:\n    source: user_kernel.py:SPEC\n    dtypes: [fp32]\n"
        "    shapes: [{N: 64}]\n    interpret: false\n",
    )
    _ready(zygotes.probe)
    said = {}
    for how in ("forked", "fresh"):
        if how == "fresh":
            monkeypatch.delenv(zygote.ENV)
        proc = run_cli("validate", str(matrix), env={"HARNESS_CALLBACK_TIMEOUT_S": "5"})
        assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
        said[how] = proc.stdout.replace(str(tmp_path), "TMP")
        importers = [tuple(map(int, line.split())) for line in witness.read_text().splitlines()]
        witness.unlink()
        # the facts child and the callback child, each in a session of its own
        assert len(importers) == 2 and all(pid == sid for pid, _, sid in importers), importers
        forked = [ppid == zygotes.probe.pid for _, ppid, _ in importers]
        assert forked == [how == "forked"] * 2, (how, importers, zygotes.probe.pid)
    assert said["forked"] == said["fresh"] and "did not return within 5 s" in said["fresh"], said
