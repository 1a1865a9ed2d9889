"""Nothing a user has is lost or written through: each loss case found against the harness, done for real
(real runs of the CLI, real signals, real symbolic links), with every byte outside the run checked after."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import DATA, REPO, run_cli, small_matrix, write_matrix

SMALL = small_matrix("safety", "[h100]")
# long enough to be interrupted in the middle with one compile worker
LONG = """\
name: safety-long
targets: [h100, mi300x]
kernels:
  vector_add:
    dtypes: [fp32, fp16]
    shapes: [{N: 4096}, {N: 8192}, {N: 12288}, {N: 16384}, {N: 20480}, {N: 24576}]
    interpret: false
"""


def _digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` and a hash of its bytes (links by their target)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = "link:" + os.readlink(path)
        elif path.is_file():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _env(tmp: Path) -> dict[str, str]:
    return {"TRITON_CACHE_DIR": str(tmp / "cache"), "HARNESS_CACHE_DIR": str(tmp / "cache" / "h")}


def test_an_archived_run_or_a_users_folder_is_refused_even_with_force(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", SMALL)
    archived = tmp_path / "archived"  # results and a report kept, the records not (or empty)
    archived.mkdir()
    (archived / "results.json").write_text('{"schema_version": 2, "run": {}, "records": []}')
    (archived / "report.md").write_text("# the report the vendor review quoted\n")
    emptied = tmp_path / "emptied"
    emptied.mkdir()
    (emptied / "records.jsonl").write_text("")
    (emptied / "results.json").write_text("{}")
    mine = tmp_path / "mine"  # a user's folder with a harness file name among others
    mine.mkdir()
    (mine / "report.md").write_text("my notes\n")
    (mine / "draft.txt").write_text("draft\n")
    before = _digest(tmp_path)
    for target, extra in (
        (archived, ()),
        (archived, ("--force",)),
        (emptied, ("--resume",)),
        (mine, ()),
        (mine, ("--force",)),
    ):
        args = ("--resume", str(target)) if extra == ("--resume",) else ("--out", str(target), *extra)
        proc = run_cli("run", str(matrix), *args, "-n", "0", env=_env(tmp_path))
        assert proc.returncode == 2, (target.name, extra, proc.stdout[-800:], proc.stderr[-800:])
        message = proc.stderr.strip().splitlines()[-1]
        assert "Traceback" not in proc.stdout + proc.stderr
        assert message.startswith("harness: --out") and "did not write" in message, message
    assert _digest(tmp_path) == before


def test_links_planted_in_a_run_directory_are_never_written_through_and_force_removes_only_run_files(
    tmp_path: Path,
) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", SMALL)
    out = tmp_path / "run"
    assert run_cli("run", str(matrix), "--out", str(out), "-n", "0", env=_env(tmp_path)).returncode == 0
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in ("md", "html", "jsonl", "json", "lock"):
        (victim / name).write_text(f"precious {name}\n")
    (victim / "dir").mkdir()
    before = _digest(victim)

    def plant(name: str, target: Path) -> None:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            import shutil

            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target)

    # a resume rewrites the records, results and both reports: each link is replaced, none followed
    for name, target in (("report.md", "md"), ("report.html", "html"), ("records.jsonl", "jsonl")):
        plant(name, victim / target)
    resumed = run_cli("run", str(matrix), "--resume", str(out), "-n", "0", env=_env(tmp_path))
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    assert _digest(victim) == before
    assert not any((out / n).is_symlink() for n in ("report.md", "report.html", "records.jsonl"))
    # --force: links where results and artifacts were are removed (not followed), a user's own file is kept
    plant("results.json", victim / "json")
    plant("artifacts", victim / "dir")
    (out / "my-notes.txt").write_text("kept\n")
    forced = run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--force", env=_env(tmp_path))
    assert forced.returncode == 0, forced.stdout[-2000:] + forced.stderr[-2000:]
    assert _digest(victim) == before
    assert (out / "my-notes.txt").read_text() == "kept\n"
    assert json.loads((out / "results.json").read_text())["records"] and not (out / "artifacts").is_symlink()
    stale = out / "artifacts" / "stale" / "kernel.ptx"  # an earlier run's artifact: --force removes it
    stale.parent.mkdir(parents=True)
    stale.write_text("from an earlier run\n")
    # a lock file that is a link is refused outright
    plant(".harness.lock", victim / "lock")
    locked = run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--force", env=_env(tmp_path))
    assert locked.returncode == 2 and "cannot use the lock file" in locked.stdout + locked.stderr
    assert "Traceback" not in locked.stdout + locked.stderr
    assert _digest(victim) == before
    (out / ".harness.lock").unlink()
    assert run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--force", env=_env(tmp_path)).returncode == 0
    assert not stale.exists() and (out / "my-notes.txt").is_file()


def test_a_relative_out_holds_when_a_kernel_module_changes_directory_at_import(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    matrix = write_matrix(
        tmp_path / "m.yaml",
        SMALL.replace("  vector_add:\n", f"  vector_add:\n    source: {DATA / 'chdir_kernel.py'}:SPEC\n"),
    )
    proc = run_cli(
        "run",
        "m.yaml",
        "--out",
        "rel",
        "-n",
        "0",
        cwd=tmp_path,
        env={**_env(tmp_path), "HARNESS_TEST_CHDIR_TO": str(elsewhere)},
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (tmp_path / "rel" / "results.json").is_file()
    assert list(elsewhere.iterdir()) == []
    assert matrix.is_file()


def _start(matrix: Path, out: Path, tmp: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), HARNESS_COMPILE_WORKERS="1", **_env(tmp))
    env.pop("TRITON_INTERPRET", None)
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out), "-n", "0"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


@pytest.mark.parametrize(
    "how", ["sigterm-twice", "ctrl-c-twice-to-the-group", "sigterm-then-again-while-writing", "three-kinds"]
)
@pytest.mark.usefixtures("no_zygote")  # signals to the run and its workers, as a user's
def test_every_interrupt_however_many_leaves_the_run_marked_interrupted(tmp_path: Path, how: str) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", LONG)
    out = tmp_path / "run"
    proc = _start(matrix, out, tmp_path)
    deadline = time.monotonic() + 300
    while not ((out / "records.jsonl").is_file() and (out / "records.jsonl").stat().st_size):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.05)
    sends = {
        "sigterm-twice": [(signal.SIGTERM, False, 0.0), (signal.SIGTERM, False, 0.0)],
        "ctrl-c-twice-to-the-group": [(signal.SIGINT, True, 0.0), (signal.SIGINT, True, 0.05)],
        "sigterm-then-again-while-writing": [(signal.SIGTERM, False, 0.0), (signal.SIGTERM, False, 0.3)],
        "three-kinds": [(signal.SIGINT, False, 0.0), (signal.SIGTERM, False, 0.0), (signal.SIGINT, True, 0.1)],
    }
    for sig, group, pause in sends[how]:
        time.sleep(pause)
        if proc.poll() is None:
            (os.killpg if group else os.kill)(proc.pid, sig)
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 3, output[-3000:]
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["interrupted"] is True and doc["records"], output[-3000:]
    assert "**INCOMPLETE**" in (out / "report.md").read_text()
    assert "Traceback" not in output


@pytest.mark.usefixtures("no_zygote")  # the file-size limit is the run's and its workers', inherited as a user's
def test_a_full_disk_stops_the_run_in_one_line_and_resume_finishes_it(tmp_path: Path) -> None:
    """The write failures of a full disk, made real with a file-size limit (RLIMIT_FSIZE: a write past it fails
    with EFBIG, as one on a full disk fails with ENOSPC, on any machine and without root)."""
    import resource

    # eight cases of five builds: results.json passes the limit after a few of them
    matrix = write_matrix(
        tmp_path / "m.yaml",
        LONG.replace(
            "[{N: 4096}, {N: 8192}, {N: 12288}, {N: 16384}, {N: 20480}, {N: 24576}]", "[{N: 4096}, {N: 8192}]"
        ).replace("kernels:", "environments:\n  mi300x: [{name: default, env: {}}]\nkernels:"),
    )
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO), HARNESS_COMPILE_WORKERS="1", **_env(tmp_path))
    env.pop("TRITON_INTERPRET", None)
    limit = 60 << 10  # results.json passes this after a dozen records; every artifact of vector_add stays under it
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out), "-n", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text[-3000:]
    assert "cannot write this run's files" in proc.stderr and "File too large" in proc.stderr, text[-3000:]
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    assert not [p for p in out.rglob("*.tmp")], "a temporary file was left behind"
    resumed = run_cli("run", str(matrix), "--resume", str(out), "-n", "0", env=_env(tmp_path))
    assert resumed.returncode in (0, 1), resumed.stdout[-3000:] + resumed.stderr[-3000:]
    doc = json.loads((out / "results.json").read_text())
    pairs = [(r["case_id"], r["config_id"]) for r in doc["records"]]
    from harness.matrix.cases import expand
    from harness.matrix.reading import parse
    from harness.support.tritoncompat import installed_triton_version

    cases = {c.id for c in expand(parse(matrix), installed_triton_version())}
    assert len(pairs) == len(set(pairs)) and {c for c, _ in pairs} == cases
    assert doc["run"]["interrupted"] is False
