"""The harness writes only into folders it owns, holds a run's folder before its first byte, keeps no failure of
the host as a kernel's result, says an interrupted run in every file it writes, and makes a compiled entry that
cannot be captured one failed case among the others.

The faults (each found by a held-out probe, each failing here before its change): ``harness compiled
exp/compiled.yaml --out exp`` replaced the user's own matrix; a second ``harness compiled`` into a running run's
folder was refused only after it had rewritten that run's ``compiled.yaml``; a read-only ``--out`` was refused only
after the user's inputs function ran; a full disk was a traceback, and its ``No space left on device`` was kept in
the result cache as the kernels' result, failing every later run; compiled.md of an interrupted run did not say so;
one compiled entry that could not be captured refused a whole ``harness run`` matrix. Real processes and real file
systems: a small tmpfs where this machine lets the suite mount one (CI's does: it runs as root), else skipped with
why.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import DATA, REPO, run_cli, write_matrix

INPUTS = DATA / "compiled" / "ending_inputs.py"


def _compiled(path: Path, inputs: str = "witness_inputs", shapes: str = "[{N: 1024}]", targets: str = "[h100]") -> Path:
    return write_matrix(
        path,
        f"name: folders\ntargets: {targets}\ncompiled:\n  dbl:\n    fn: {INPUTS}:double\n    inputs: {INPUTS}:{inputs}\n"
        f"    shapes: {shapes}\n    dtypes: [fp32]\n",
    )


@contextmanager
def small_fs(path: Path, size: str, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of ``size`` at ``path`` (read-only with ``read_only``), unmounted after."""
    path.mkdir()
    options = f"size={size}" + (",ro" if read_only else "")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {made.stderr.strip()[:200]}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_a_folder_holding_the_users_own_matrix_is_refused_untouched(tmp_path: Path) -> None:
    exp = tmp_path / "exp"
    exp.mkdir()
    mine = _compiled(exp / "compiled.yaml")
    mine.write_text(mine.read_text() + "# the user's own comment\n")
    before = mine.read_bytes()
    witness = tmp_path / "witness"
    proc = run_cli("compiled", str(mine), "--out", str(exp), env={"USER_CODE_WITNESS": str(witness)})
    assert proc.returncode == 2, proc.stdout[-1500:] + proc.stderr[-1500:]
    said = proc.stderr.strip().splitlines()
    assert len(said) == 1 and "holds files a harness run did not write (compiled.yaml" in said[0], said
    assert mine.read_bytes() == before and sorted(p.name for p in exp.iterdir()) == ["compiled.yaml"]
    assert not witness.exists()  # refused before any user code ran


def test_a_run_refused_by_another_runs_lock_writes_nothing_there(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # another harness run, as far as the folder can tell: a process that holds it as a run does (checked, locked,
    # marked), with its run matrix written
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from harness.results import rundir; "
         f"rundir.hold(Path({str(out)!r}), force=True); print('held', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        (out / "compiled.yaml").write_text("the first run's matrix\n")
        witness = tmp_path / "witness"
        proc = run_cli("compiled", str(_compiled(tmp_path / "other.yaml")), "--out", str(out),
                       env={"USER_CODE_WITNESS": str(witness)})  # fmt: skip
        assert proc.returncode == 2 and "is in use by another harness run" in proc.stderr, proc.stderr[-1500:]
        assert (out / "compiled.yaml").read_text() == "the first run's matrix\n"
        assert sorted(p.name for p in out.iterdir()) == [".harness-run", ".harness.lock", "compiled.yaml"]
        assert not witness.exists()
    finally:
        holder.kill()
        holder.wait()


def test_a_read_only_out_is_refused_before_any_user_code_runs(tmp_path: Path) -> None:
    witness = tmp_path / "witness"
    matrix = _compiled(tmp_path / "m.yaml")
    with small_fs(tmp_path / "ro", "1m", read_only=True) as ro:
        for command in ("run", "compiled"):
            started = time.monotonic()
            proc = run_cli(command, str(matrix), "--out", str(ro / "out"), env={"USER_CODE_WITNESS": str(witness)})
            assert proc.returncode == 2 and time.monotonic() - started < 20, (command, proc.stderr[-1500:])
            assert len(proc.stderr.strip().splitlines()) == 1 and "Read-only file system" in proc.stderr, proc.stderr
            assert not witness.exists(), command  # the inputs function was never called


#: the two tests' entry: captured once, by the first of them, into the module's cache (the capture is remembered)
SHAPES = "[{N: 1024}, {N: 2048}, {N: 4096}, {N: 8192}]"


@pytest.fixture(scope="module")
def capture_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("capture-cache")


def test_a_full_disk_is_one_line_never_a_kept_result_and_a_resume_builds_again(
    tmp_path: Path, capture_cache: Path
) -> None:
    # the result cache on, as a user's runs have it: what a full disk does to it is the point
    env = {"USER_CODE_WITNESS": str(tmp_path / "witness"), "HARNESS_CACHE_DIR": str(capture_cache),
           "HARNESS_RESULT_CACHE": "1"}  # fmt: skip
    matrix = _compiled(tmp_path / "m.yaml", shapes=SHAPES)
    with small_fs(tmp_path / "small", "250k") as small:
        out = small / "out"
        full = run_cli("compiled", str(matrix), "--out", str(out), "-n", "0", env=env)
        assert full.returncode == 3, full.stdout[-2000:] + full.stderr[-2000:]
        assert "Traceback" not in full.stdout + full.stderr
        assert "No space left on device" in full.stderr and full.stderr.count("\n") <= 2, full.stderr
        kept = list((capture_cache / "results").rglob("result.json"))
        assert kept and [p for p in kept if "No space" in p.read_text()] == []  # never a kernel's kept result
        subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)  # the disk grown
        resumed = run_cli("run", str(out / "compiled.yaml"), "--resume", str(out), "--static-only", "-n", "0", env=env)
        assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
        assert "No space" not in (out / "records.jsonl").read_text()
    fresh = run_cli("run", str(matrix), "--out", str(tmp_path / "fresh"), "-n", "0", "--static-only", env=env)
    assert fresh.returncode == 0 and "No space" not in fresh.stdout, fresh.stdout[-2000:]


def test_an_interrupted_compiled_run_says_so_in_compiled_md(tmp_path: Path, capture_cache: Path) -> None:
    matrix = _compiled(tmp_path / "m.yaml", shapes=SHAPES)
    out = tmp_path / "out"
    # the suite's result cache off (HARNESS_RESULT_CACHE=0) and Triton's cache cold: every config is compiled, so
    # the run is still building when the first case's records are in (the capture is the module's, remembered)
    env = {**os.environ, "PYTHONPATH": str(REPO), "USER_CODE_WITNESS": str(tmp_path / "witness"),
           "HARNESS_CACHE_DIR": str(capture_cache), "TRITON_CACHE_DIR": str(tmp_path / "triton-cache")}  # fmt: skip
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.Popen([sys.executable, "-m", "harness", "compiled", str(matrix), "--out", str(out), "-n", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        end = time.monotonic() + 120
        records = out / "records.jsonl"
        while not (records.is_file() and records.stat().st_size) and time.monotonic() < end:
            time.sleep(0.1)  # the first case finished: the builds are under way
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        said, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 3, said[-2000:]
    assert (out / "compiled.md").read_text().splitlines()[2].startswith("**INCOMPLETE: this run was interrupted")
    assert "INCOMPLETE: this run was interrupted" in (out / "compiled.html").read_text()


def test_an_entry_that_cannot_be_captured_is_one_failed_case_captured_once(tmp_path: Path) -> None:
    witness = tmp_path / "witness"
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"name: mixed\ntargets: [h100, mi300x]\nkernels:\n  ending:\n    source: {DATA / 'ending_kernel.py'}:SPEC\n"
        "    dtypes: [fp32]\n    shapes: [{N: 64}]\n    interpret: false\n"
        f"compiled:\n  broken:\n    fn: {INPUTS}:double\n    inputs: {INPUTS}:witness_inputs\n"
        "    shapes: [{N: 1024}]\n    dtypes: [fp32]\n",
    )
    # the suite's HARNESS_RESULT_CACHE=0 (--no-reuse): no failure an earlier run kept is read, but the run's own is
    env = {"USER_CODE_WITNESS": str(witness), "USER_CODE_FAILS": "1", "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_cli("run", str(matrix), "--out", str(tmp_path / "out"), "-n", "2", "--static-only", env=env)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    from harness.results.store import load_results

    _, records = load_results(tmp_path / "out" / "results.json")
    got = sorted((r.kernel, r.target, r.status) for r in records)
    assert got == [("broken.capture", "h100", "error"), ("broken.capture", "mi300x", "error"),
                   ("ending", "h100", "ok"), ("ending", "mi300x", "ok")], got  # fmt: skip
    failed = [r.error for r in records if r.status != "ok"]
    assert all("ValueError: these inputs cannot be made (planted)" in e for e in failed), failed
    # "ending" asks for no check (interpret: false, --static-only): counted not-checked, said why
    assert proc.stdout.strip().splitlines()[-1].endswith("1 failed, 1 not-checked · exit 1"), proc.stdout[-500:]
    assert "the inputs function ending_inputs.py:witness_inputs raised ValueError" in failed[0], failed
    report = (tmp_path / "out" / "report.md").read_text()
    # the inputs function's own failure, named as such (not "compiling broken (fn)": the function never ran)
    assert "not captured: compiled entry broken on h100 for {'N': 1024} fp32: the inputs function " in report
    assert "ending_inputs.py:witness_inputs raised ValueError" in report
    assert "harness repro" not in report  # nothing to rebuild
    # captured once per target, by the command, and never again by its two workers (each reads the matrix anew,
    # as a --resume does): what they read is the failure remembered on disk
    assert sorted(witness.read_text().splitlines()) == ["h100 {'N': 1024}", "mi300x {'N': 1024}"]
