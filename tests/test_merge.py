"""Merging runs: the same directories in any order give the same report; runs of different matrices are not mixed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import call_cli, run_cli, write_matrix


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("merge")
    out = []
    for target in ("h100", "mi300x"):
        matrix = write_matrix(
            tmp / f"{target}.yaml",
            f"""\
name: merge-{target}
targets: [{target}]
kernels:
  vector_add:
    dtypes: [fp32]
    shapes: [{{N: 4096}}]
""",
        )
        proc = run_cli("run", str(matrix), "--out", str(tmp / target), "-n", "0")
        assert proc.returncode == 0, proc.stdout[-2000:]
        out.append(tmp / target)
    return out[0], out[1]


def test_merging_in_any_order_gives_byte_identical_reports(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two_runs
    first = call_cli(
        "report",
        str(a),
        str(b),
        "--out",
        str(tmp_path / "ab" / "report.md"),
        "--csv",
        str(tmp_path / "ab.csv"),
        "--vendor-eval",
    )
    second = call_cli(
        "report",
        str(b),
        str(a),
        "--out",
        str(tmp_path / "ba" / "report.md"),
        "--csv",
        str(tmp_path / "ba.csv"),
        "--vendor-eval",
    )
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    for name in ("report.md", "report.html", "vendor-eval.md"):
        assert (tmp_path / "ab" / name).read_bytes() == (tmp_path / "ba" / name).read_bytes(), name
    assert (tmp_path / "ab.csv").read_bytes() == (tmp_path / "ba.csv").read_bytes()
    assert first.stdout.replace("/ab/", "/x/") == second.stdout.replace("/ba/", "/x/")


def test_the_same_case_from_different_matrix_content_is_refused(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = two_runs
    edited = tmp_path / "edited"
    shutil.copytree(a, edited)
    doc = json.loads((edited / "results.json").read_text())
    for r in doc["records"]:  # the matrix was edited between the runs: other interpreter shapes for the kernel
        for check in (r.get("correctness") or {}).get("checks", []):
            check["shape"] = {"N": 77}
    (edited / "results.json").write_text(json.dumps(doc))
    proc = call_cli("report", str(a), str(edited), "--out", str(tmp_path / "x.md"))
    assert proc.returncode == 2 and "cannot merge" in proc.stderr and "defined differently" in proc.stderr
    assert not (tmp_path / "x.md").exists()


def test_summaries_are_per_triton_version_never_summed(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = two_runs
    other = tmp_path / "other-pin"
    shutil.copytree(a, other)
    doc = json.loads((other / "results.json").read_text())
    doc["run"]["triton"] = "9.9.9"
    for r in doc["records"]:
        r["triton"] = "9.9.9"
    (other / "results.json").write_text(json.dumps(doc))
    proc = call_cli("report", str(a), str(other), "--out", str(tmp_path / "m.md"))
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "m.md").read_text()
    section = text.split("## Per target")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("| vector_add")]
    installed = json.loads((a / "results.json").read_text())["run"]["triton"]
    assert {line.split("|")[2].strip() for line in lines} == {installed, "9.9.9"} and len(lines) == 2
    assert len({line.split("|")[4].strip() for line in lines}) == 1  # the same count under each version, not doubled
