"""A run cut mid-way or narrowed by -k never lets an opt-in environment decide a verdict, and ``harness compare``
judges only what both runs completed: real static runs, one cut by SIGTERM, one narrowed by -k, one losing builds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, call_cli, run_cli, write_matrix

from harness.model.run_info import RunInfo

# async-copy listed first: its case of a shape runs just before the default one, so a stop right after an
# async-copy record leaves that shape's mi300x without its deciding build (the state a cut CI job leaves)
MATRIX = """\
name: incomplete
targets: [h100, mi300x]
environments:
  mi300x:
    - {name: async-copy, env: {TRITON_HIP_USE_ASYNC_COPY: "1"}}
    - {name: default, env: {}}
kernels:
  vector_add:
    dtypes: [fp32, fp16]
    shapes: [{N: 4096}, {N: 8192}, {N: 12288}, {N: 16384}]
    interpret: false
"""


def _deciding(doc: dict) -> list[dict]:
    return [v for v in doc["verdicts"] if v["deciding"]]


def _cut_run(matrix: Path, out: Path, cache: Path) -> str:
    """A real run stopped by SIGTERM as soon as an async-copy build is recorded, before its default build."""
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        TRITON_CACHE_DIR=str(cache),
        HARNESS_CACHE_DIR=str(cache / "h"),
        HARNESS_COMPILE_WORKERS="1",
    )
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out), "-n", "0"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    jsonl, deadline = out / "records.jsonl", time.monotonic() + 300
    while time.monotonic() < deadline:
        text = jsonl.read_text() if jsonl.is_file() else ""
        if '"environment": "async-copy"' in text:
            break
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 3, output[-3000:]
    return output


@pytest.fixture(scope="module")
def cut_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    tmp = tmp_path_factory.mktemp("cut")
    matrix = write_matrix(tmp / "m.yaml", MATRIX)
    first = _cut_run(matrix, tmp / "a", tmp / "cache")
    _cut_run(matrix, tmp / "b", tmp / "cache")
    return tmp / "a", tmp / "b", first


def test_a_run_cut_mid_case_gives_incomplete_never_the_opt_in_verdict(cut_runs: tuple[Path, Path, str]) -> None:
    out, _, terminal = cut_runs
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["interrupted"] is True
    builds = {(r["dtype"], r["shape"]["N"], r["environment"]) for r in doc["records"] if r["target"] == "mi300x"}
    cut = {(d, n) for d, n, e in builds if e == "async-copy" and (d, n, "default") not in builds}
    assert cut, f"the stop did not fall between an async-copy build and its default one: {sorted(builds)}"
    for v in _deciding(doc):
        if v["target"] == "mi300x" and (v["dtype"], v["shape"]["N"]) in cut:
            assert v["verdict"] == "incomplete" and v["environment"] is None, v
    assert all(v["verdict"] != "incomplete" for v in _deciding(doc) if v["target"] == "h100")
    rows = [p for p in doc["portability"] if (p["dtype"], p["shape"]["N"]) in cut]
    assert rows and all(p["category"] == "incomplete" and "incomplete on mi300x" in p["verdict"] for p in rows)
    assert "INCOMPLETE: the run" in terminal and "have no build under the deciding environment" in terminal
    report = (out / "report.md").read_text()
    assert "**INCOMPLETE**" in report and "| incomplete" in report
    html = (out / "report.html").read_text()
    assert "class=incomplete" in html and "INCOMPLETE (interrupted)" in html


def test_a_k_selection_of_opt_in_builds_decides_nothing(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX)
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        str(matrix),
        "--out",
        str(out),
        "-n",
        "0",
        "-k",
        "async",
        env={"TRITON_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    doc = json.loads((out / "results.json").read_text())
    assert {r["environment"] for r in doc["records"]} == {"async-copy"}
    assert {v["verdict"] for v in _deciding(doc)} == {"incomplete"}
    assert {p["category"] for p in doc["portability"]} == {"incomplete"}
    n = len(_deciding(doc))
    assert n == 8 * 5 and f"mi300x {n} incomplete" in proc.stdout and f"INCOMPLETE: {n} config x target" in proc.stdout
    assert "exceed" not in proc.stdout.split("triton portability")[-1].split("harness: results")[0]
    assert "| incomplete" in (out / "report.md").read_text()
    assert "class=incomplete" in (out / "report.html").read_text()
    assert len(doc["run"]["selected"]) == 8 and {e["environment"] for e in doc["run"]["selected"]} == {"async-copy"}


def test_compare_refuses_cut_runs_unless_allowed_and_then_names_what_it_left_out(
    cut_runs: tuple[Path, Path, str], tmp_path: Path
) -> None:
    a, b, _ = cut_runs
    refused = call_cli("compare", str(a), str(b))
    assert refused.returncode == 3 and "interrupted before every case ran" in refused.stdout
    assert "--allow-incomplete" in refused.stdout
    allowed = call_cli("compare", str(a), str(b), "--allow-incomplete", "--json", str(tmp_path / "d.json"))
    assert allowed.returncode == 0, allowed.stdout
    diff = json.loads((tmp_path / "d.json").read_text())
    assert not [c for c in diff["changes"] if c["worse"]]
    assert any(n.startswith("verdict incomplete in") for n in diff["not_compared"])
    assert "not compared (left out of every verdict)" in allowed.stdout


def test_compare_calls_builds_lost_by_the_new_run_worse(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX.replace("[fp32, fp16]", "[fp16]"))
    base = tmp_path / "base"
    proc = run_cli("run", str(matrix), "--out", str(base), "-n", "0", env={"TRITON_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stdout[-2000:]
    same = call_cli("compare", str(base), str(base))
    assert same.returncode == 0 and "0 missing in new" in same.stdout
    doc = json.loads((base / "results.json").read_text())
    lost = [r for r in doc["records"] if r["shape"]["N"] == 8192 and r["target"] == "h100"]
    doc["records"] = [r for r in doc["records"] if r not in lost]  # a kernel that silently dropped out
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "results.json").write_text(json.dumps(doc))
    worse = call_cli("compare", str(base), str(tmp_path / "new"))
    assert worse.returncode == 2, worse.stdout
    assert f"{len(lost)} missing in new" in worse.stdout
    assert (
        f"WORSE: missing in new (selected by its matrix, not built): vector_add fp16 N8192 h100 "
        f"{lost[0]['config_id']}" in worse.stdout
    )
    # a matrix that no longer selects them: informational, not worse
    doc["run"]["selected"] = [
        e for e in doc["run"]["selected"] if not (e["shape"]["N"] == 8192 and e["target"] == "h100")
    ]
    (tmp_path / "new" / "results.json").write_text(json.dumps(doc))
    narrowed = call_cli("compare", str(base), str(tmp_path / "new"))
    assert narrowed.returncode == 0 and f"({len(lost)} only in base, " in narrowed.stdout


def test_the_selection_is_recorded_under_xdist_too(tmp_path: Path) -> None:
    """The xdist controller collects nothing: the selection comes from a worker's collection, after -k."""
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX.replace("[fp32, fp16]", "[fp16]"))
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        str(matrix),
        "--out",
        str(out),
        "-n",
        "2",
        "-k",
        "N4096 and mi300x",
        env={"TRITON_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    doc = json.loads((out / "results.json").read_text())
    selected = {(e["shape"]["N"], e["target"], e["environment"], len(e["configs"])) for e in doc["run"]["selected"]}
    built = {(r["shape"]["N"], r["target"], r["environment"]) for r in doc["records"]}
    assert selected == {(4096, "mi300x", "async-copy", 5), (4096, "mi300x", "default", 5)}
    assert {s[:3] for s in selected} == built


def test_a_damaged_selection_is_refused_in_one_line(tmp_path: Path) -> None:
    from harness.analysis.compare import CompareInputError, compare_runs

    with pytest.raises(CompareInputError, match=r"run.selected\[1\] is not"):
        compare_runs(
            [],
            [],
            new_run=RunInfo.from_json(
                {
                    "end": "x",
                    "selected": [
                        {
                            "kernel": "k",
                            "dtype": "fp16",
                            "shape": {},
                            "target": "h100",
                            "environment": "default",
                            "configs": [],
                        },
                        {"kernel": 3},
                    ],
                }
            ),
        )
