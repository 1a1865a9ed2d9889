"""A compile that aborts, hangs or raises costs only its own record."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers import DATA, REPO, run_cli, write_matrix

from harness.execution.pool import Worker

# the worker processes as every user's run starts them: fresh interpreters, not the suite's zygote
pytestmark = pytest.mark.usefixtures("no_zygote")

MISBEHAVING = f"{DATA / 'misbehaving_kernel.py'}:SPEC"


def _job(n: int, out: Path) -> dict:
    from harness.model import targets

    return {
        "ref": MISBEHAVING,
        "dtype": "fp32",
        "shape": {"N": n},
        "target": targets.get("h100").to_dict(),
        "config": {"BLOCK": 128, "num_warps": 4},
        "out": str(out),
        "artifact_parts": ["a", str(n)],
    }


def test_worker_is_reused_and_only_a_dead_one_is_replaced(tmp_path: Path) -> None:
    import os

    env = dict(os.environ, PYTHONPATH=str(REPO))
    worker = Worker("compile", env)
    try:
        first = worker.request("compile", _job(1000, tmp_path), timeout=600)
        pid = worker.pid
        second = worker.request("compile", _job(1001, tmp_path), timeout=600)
        assert first["status"] == second["status"] == "ok"
        assert worker.pid == pid and worker.started == 1  # no fresh interpreter per compile

        crash = worker.request("compile", _job(64, tmp_path), timeout=600)
        assert crash["status"] == "crash" and "SIGABRT" in crash["error"]

        raised = worker.request("compile", _job(16, tmp_path), timeout=600)
        assert raised["status"] == "error" and "N=16 is refused" in raised["error"]
        assert worker.started == 2  # replaced once, after the abort; an exception keeps the worker

        start = time.monotonic()
        hung = worker.request("compile", _job(32, tmp_path), timeout=3)
        assert hung["status"] == "timeout" and time.monotonic() - start < 120

        after = worker.request("compile", _job(1002, tmp_path), timeout=600)
        assert after["status"] == "ok" and worker.started == 3
    finally:
        worker.close()


def test_run_keeps_every_other_record_when_one_compile_aborts(tmp_path: Path) -> None:
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: isolation
targets: [h100, mi300x]
environments:
  mi300x: [{{name: default, env: {{}}}}]
timeout_s: 600
kernels:
  misbehaving:
    source: {MISBEHAVING}
    dtypes: [fp32]
    interpret: false
    configs:
      - {{BLOCK: 128, num_warps: 4}}
    shapes:
      - {{N: 1000}}
      - {{N: 64}}
      - {{N: 2000}}
  hangs:  # N=32 blocks until killed: only this entry has a short limit, so load never times a good build out
    source: {MISBEHAVING}
    dtypes: [fp32]
    interpret: false
    timeout_s: 6
    configs:
      - {{BLOCK: 128, num_warps: 4}}
    shapes:
      - {{N: 32}}
""",
    )
    out = tmp_path / "out"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads((out / "results.json").read_text())
    by_n: dict[int, list[str]] = {}
    for rec in doc["records"]:
        by_n.setdefault(rec["shape"]["N"], []).append(rec["status"])
    assert by_n[1000] == ["ok", "ok"] and by_n[2000] == ["ok", "ok"]
    assert by_n[64] == ["crash", "crash"]
    assert by_n[32] == ["timeout", "timeout"]
    assert len(doc["records"]) == 8
    assert "SIGABRT" in next(r["error"] for r in doc["records"] if r["status"] == "crash")
    assert doc["run"]["end"] is not None
