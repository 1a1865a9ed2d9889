"""Every refusal of a run directory names a command that works, and the harness's own files never count as foreign.

The faults: a run killed after its first artifact but before its first record (``--resume`` said "no records to
resume from", a plain run said "use --resume ... or --force": each sent you to the other); a refused ``--resume``
of a missing or empty directory left the harness's ``.harness.lock`` behind, after which even ``--force`` refused
the directory as holding "files a harness run did not write". Each refusal here is followed by the command it
names, which must then work.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import run_cli, run_static, small_matrix, write_matrix


def _env(tmp: Path) -> dict[str, str]:
    return {"TRITON_CACHE_DIR": str(tmp / "cache"), "HARNESS_CACHE_DIR": str(tmp / "cache" / "h")}


def _run(matrix: Path, tmp: Path, *args: str) -> tuple[int, str]:
    proc = run_cli("run", str(matrix), *args, "-n", "0", "--static-only", env=_env(tmp))
    said = proc.stdout + proc.stderr
    assert "Traceback" not in said, said[-2000:]
    return proc.returncode, said


def _builds(out: Path) -> int:
    records = json.loads((out / "results.json").read_text())["records"]
    return sum(r["mode"] == "compile" and r["status"] == "ok" for r in records)


def test_a_run_killed_before_its_first_record_can_be_resumed_or_forced(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("forward"))
    out = tmp_path / "run"
    run_static(matrix, out, env=_env(tmp_path))
    builds = _builds(out)
    # what a kill between the first artifact and the first record leaves: the marker, the lock, artifacts
    for name in ("records.jsonl", "results.json", "report.md", "report.html"):
        (out / name).unlink(missing_ok=True)
    assert (out / ".harness-run").is_file() and any((out / "artifacts").rglob("*"))
    code, said = _run(matrix, tmp_path, "--out", str(out))
    assert code == 2 and "--resume" in said and "--force" in said, said[-800:]
    code, said = _run(matrix, tmp_path, "--resume", str(out))  # the first command it names works
    assert code == 0, said[-2000:]
    assert "starts it over" in said and _builds(out) == builds
    for name in ("records.jsonl", "results.json", "report.md"):
        (out / name).unlink()
    code, said = _run(matrix, tmp_path, "--out", str(out), "--force")  # and so does the second
    assert code == 0 and _builds(out) == builds, said[-2000:]


def test_a_refused_resume_leaves_nothing_behind_and_names_a_command_that_works(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("forward"))
    missing, empty = tmp_path / "missing", tmp_path / "empty"
    empty.mkdir()
    for where in (missing, empty):
        code, said = _run(matrix, tmp_path, "--resume", str(where))
        assert code == 2, said[-800:]
        line = said.strip().splitlines()[-1]
        assert "no run there to resume" in line and f"--out {where}" in line, line
        assert not where.exists() if where is missing else not any(where.iterdir())  # no lock left behind
        named = re.search(r"harness run MATRIX (--out \S+)", line)
        assert named is not None, line
        code, said = _run(matrix, tmp_path, *named.group(1).split())
        assert code == 0 and _builds(where) == 2, said[-2000:]  # h100 and mi300x


def test_a_lock_file_left_by_an_older_harness_is_its_own_not_foreign(tmp_path: Path) -> None:
    """An empty directory holding only ``.harness.lock`` (what the refused resume of earlier versions left)."""
    matrix = write_matrix(tmp_path / "m.yaml", small_matrix("forward"))
    for extra in (("--force",), ()):
        out = tmp_path / f"locked{len(extra)}"
        out.mkdir()
        (out / ".harness.lock").write_text('{"pid": 1, "host": "elsewhere"}')
        code, said = _run(matrix, tmp_path, "--out", str(out), *extra)
        assert code == 0 and "did not write" not in said, said[-2000:]
