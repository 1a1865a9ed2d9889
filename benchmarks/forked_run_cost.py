"""What one small ``harness run`` costs when the suite's zygotes fork it, in CPU-seconds per process role.

Starts the four zygotes as tests/conftest.py does (``harness.support.zygote``: compile, interpret, cli, probe),
runs a one-config vector_add matrix on h100 and mi300x once to warm Triton's cache, then N more times through
``tests/helpers.run_cli`` (forked by the cli zygote, its compile workers by the compile zygote), with the result
cache off as the suite has it. The CPU each role's children used is read from ``/proc/<zygote>/stat`` (their
reaped children's user + system time) before and after. No GPU needed.

``.venv/bin/python benchmarks/forked_run_cost.py [N]`` prints CPU-seconds per run by role and the wall time per run.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO)]
os.environ["HARNESS_RESULT_CACHE"] = "0"

import conftest  # noqa: E402 - the suite's own way of starting zygotes
from helpers import run_cli, small_matrix  # noqa: E402

from harness.support import zygote  # noqa: E402

ROLES = ("compile", "interpret", "cli", "probe")


def _children_cpu(pid: int) -> float:
    """User + system seconds of ``pid`` and of its reaped children (fields 14-17 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def main(runs: int) -> None:
    folder = tempfile.mkdtemp(prefix="hz-")
    started = {role: conftest._start_zygote(folder, role) for role in ROLES}
    os.environ[zygote.ENV] = folder
    tmp = Path(tempfile.mkdtemp())
    try:
        deadline = time.monotonic() + 120
        while not all(Path(z.address).exists() for z, _ in started.values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        matrix = tmp / "m.yaml"
        matrix.write_text(small_matrix("forked"))
        env = {"TRITON_CACHE_DIR": str(tmp / "triton")}
        assert run_cli("run", str(matrix), "--out", str(tmp / "warm"), "-n", "0", env=env).returncode == 0
        before = {role: _children_cpu(proc.pid) for role, (_, proc) in started.items()}
        start = time.perf_counter()
        for i in range(runs):
            proc = run_cli("run", str(matrix), "--out", str(tmp / f"run{i}"), "-n", "0", env=env)
            assert proc.returncode == 0, proc.stdout[-2000:]
        wall = (time.perf_counter() - start) / runs
        after = {role: _children_cpu(proc.pid) for role, (_, proc) in started.items()}
        per_run = {role: round((after[role] - before[role]) / runs, 3) for role in ROLES}
        print(f"CPU-seconds per run by role: {per_run}; total {sum(per_run.values()):.2f}; wall per run {wall:.2f} s")
    finally:
        for _, proc in started.values():
            proc.terminate()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
