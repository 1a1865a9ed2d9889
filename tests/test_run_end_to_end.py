"""`harness run` / `pytest MATRIX` as a user runs them: results, artifacts, table, selection, merge."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import REPO, call_cli, run_cli, small_matrix, write_matrix

MATRIX = """\
name: e2e
targets: [h100, mi300x]
kernels:
  vector_add:
    dtypes: [fp16]
    shapes:
      - {N: 5000}
  matmul:
    dtypes: [fp16]
    shapes:
      - {M: 256, N: 256, K: 256}
    configs:
      - {BLOCK_M: 128, BLOCK_N: 256, BLOCK_K: 64, GROUP_M: 8, num_warps: 8, num_stages: 3}
      - {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, GROUP_M: 8, num_warps: 4, num_stages: 2, waves_per_eu: 2}
    interpret:
      - {M: 33, N: 65, K: 47}
"""


NOISY = "a pytest plugin the harness does not use was loaded"


def _noisy_plugin(root: Path) -> Path:
    """An installed pytest plugin unrelated to the harness (a GPU host's pytest-benchmark prints a warning per
    process): a distribution with a ``pytest11`` entry point whose plugin says so when it is configured."""
    site = root / "site"
    info = site / "noisy_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: noisy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nnoisy = noisy_pytest_plugin\n")
    (site / "noisy_pytest_plugin.py").write_text(f"def pytest_configure(config):\n    print({NOISY!r}, flush=True)\n")
    return site


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("e2e")
    matrix = write_matrix(tmp / "e2e.yaml", MATRIX)
    out = tmp / "run"
    env = {"PYTHONPATH": os.pathsep.join((str(_noisy_plugin(tmp)), str(REPO)))}
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "2", "--wide", "--", f"--junitxml={tmp / 'junit.xml'}",
                   env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, proc.stdout + proc.stderr


def test_the_run_loads_no_unrelated_pytest_plugin(run_dir: tuple[Path, str]) -> None:
    """Neither the run's session nor its xdist workers load an installed plugin the harness does not name."""
    assert NOISY not in run_dir[1]


def test_results_json_has_run_and_records(run_dir: tuple[Path, str]) -> None:
    out, _ = run_dir
    doc = json.loads((out / "results.json").read_text())
    assert doc["schema_version"] == 3
    run = doc["run"]
    for key in ("triton", "torch", "python", "host", "gpus", "commit", "matrix", "start", "end"):
        assert key in run
    assert run["matrix"]["name"] == "e2e" and len(run["matrix"]["sha256"]) == 64
    compiles = [r for r in doc["records"] if r["mode"] == "compile"]
    # (vector_add default space + matmul's two) x (h100, mi300x): under Triton's defaults only, as none is named
    assert len(compiles) == 2 * (5 + 2)
    assert {r["environment"] for r in compiles} == {"default"}
    for rec in compiles:
        for key in (
            "kernel",
            "dtype",
            "shape",
            "target",
            "arch",
            "triton",
            "config",
            "status",
            "resources",
            "flags",
            "artifacts",
        ):
            assert key in rec
        assert rec["status"] == "ok"
        for info in rec["artifacts"].values():
            assert (out / info["path"]).is_file() and not Path(info["path"]).is_absolute()


def test_interpreter_records_pass(run_dir: tuple[Path, str]) -> None:
    out, _ = run_dir
    doc = json.loads((out / "results.json").read_text())
    interp = [r for r in doc["records"] if r["mode"] == "interpret"]
    assert {r["kernel"] for r in interp} == {"vector_add", "matmul"}
    assert all(r["status"] == "ok" and r["correctness"]["checks"] for r in interp)


def test_table_marks_the_nvidia_only_config_with_its_byte_count(run_dir: tuple[Path, str]) -> None:
    out, stdout = run_dir
    doc = json.loads((out / "results.json").read_text())
    amd_big = next(r for r in doc["records"] if r["target"] == "mi300x" and r["config"].get("BLOCK_N") == 256)
    shared = amd_big["resources"]["shared"]
    row = next(line for line in stdout.splitlines() if "M128_N256_K64" in line)
    assert f"{shared} > 65536" in row and "NVIDIA only" in row
    report = (out / "report.md").read_text()
    assert "NVIDIA only" in report and f"shared {shared} exceeds limit 65536" in report


def test_junit_xml_through_pytest_flag(run_dir: tuple[Path, str]) -> None:
    out, _ = run_dir
    tree = ET.parse(out.parent / "junit.xml")
    names = {case.get("name") for case in tree.iter("testcase")}
    assert "matmul[fp16-M256xN256xK256-mi300x-triton" + _installed() + "]" in names
    # ids and outcomes, not the records (their raw samples and artifacts live in results.json)
    assert not [p for p in tree.iter("property") if p.get("name") == "harness_record"]
    assert (out.parent / "junit.xml").stat().st_size < 20_000


def _installed() -> str:
    from harness.support.tritoncompat import installed_triton_version

    return str(installed_triton_version())


def test_k_and_targets_select_cases(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX)
    out = tmp_path / "run"
    proc = run_cli(
        "run", str(matrix), "--out", str(out), "-n", "0", "--targets", "mi355x", "-k", "matmul and not interpret"
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    records = json.loads((out / "results.json").read_text())["records"]
    assert {(r["kernel"], r["target"], r["arch"]) for r in records} == {("matmul", "mi355x", "gfx950")}
    proc = run_cli("run", str(matrix), "--out", str(tmp_path / "none"), "-k", "no_such_case")
    assert proc.returncode == 4


def test_other_triton_versions_are_deselected_naming_the_tox_env(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX.replace("name: e2e", 'name: e2e\ntriton: ["3.4.0", installed]'))
    proc = run_cli("run", str(matrix), "--out", str(tmp_path / "run"), "-n", "0", "-k", "vector_add and h100")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    if _installed() != "3.4.0":
        assert "need triton 3.4.0" in proc.stdout and "tox -e triton34" in proc.stdout


def test_known_failures_are_expected_and_fixed_ones_reported(tmp_path: Path) -> None:
    from helpers import DATA

    body = f"""\
name: known
targets: [h100]
kernels:
  misbehaving:
    source: {DATA / "misbehaving_kernel.py"}:SPEC
    dtypes: [fp32]
    shapes: [{{N: 16}}, {{N: 4096}}]
    interpret: false
"""
    plain = write_matrix(tmp_path / "plain.yaml", body)
    assert run_cli("run", str(plain), "--out", str(tmp_path / "a"), "-n", "0").returncode == 1  # N=16 fails
    known = write_matrix(
        tmp_path / "known.yaml",
        body.replace(
            "kernels:",
            """known_failures:
  - {kernel: misbehav*, shape: N16, triton: ">=3.3", reason: "the test kernel refuses N=16"}
  - {kernel: misbehaving, shape: N4096, reason: "once broken"}
  - {kernel: misbehaving, triton: "<3.0", reason: "another release only"}
kernels:""",
        ),
    )
    proc = run_cli("run", str(known), "--out", str(tmp_path / "b"), "-n", "0")
    assert proc.returncode == 0, proc.stdout[-2000:]
    records = json.loads((tmp_path / "b" / "results.json").read_text())["records"]
    failed = [r for r in records if r["status"] != "ok"]
    assert failed and all(r["expected_failure"] == "the test kernel refuses N=16" for r in failed)
    assert {r["known_failure_fixed"] for r in records if r["status"] == "ok"} == {"once broken"}
    assert "known failure now passes" in proc.stdout
    assert "## Known failures that now pass" in (tmp_path / "b" / "report.md").read_text()


def test_a_short_pin_matches_its_releases_and_xdist_still_says_what_it_deselected(tmp_path: Path) -> None:
    from harness.support.tritoncompat import pin_matches

    assert pin_matches("3.7", "3.7.1") and pin_matches("3.6.0", "3.6.0+git1a2b") and not pin_matches("3.7", "3.70.0")
    assert not pin_matches("3.6.0+gitaaaa", "3.6.0+gitbbbb") and not pin_matches("3.7", None)
    major_minor = ".".join(_installed().split(".")[:2])
    matrix = write_matrix(
        tmp_path / "m.yaml", MATRIX.replace("name: e2e", f'name: e2e\ntriton: ["{major_minor}", "2.9"]')
    )
    valid = call_cli("validate", str(matrix))
    assert f"triton {major_minor}: matches {major_minor} and {major_minor}.x; runs here" in valid.stdout
    proc = run_cli("run", str(matrix), "--out", str(tmp_path / "run"), "-n", "2", "-k", "vector_add and h100")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "need triton 2.9" in proc.stdout  # counted by the controller, though xdist workers deselected them
    ids = {r["case_id"] for r in json.loads((tmp_path / "run" / "results.json").read_text())["records"]}
    assert ids and all(i.endswith(f"-triton{_installed()}]") for i in ids)  # the pin resolved to the release


def test_plain_pytest_collects_a_matrix_with_readable_ids(pytester: pytest.Pytester) -> None:
    """The plugin as pytest loads it, in this process (pytester): a matrix file is a collection of cases."""
    from harness.cli import _plugin_autoloaded

    matrix = write_matrix(pytester.path / "m.yaml", MATRIX)
    plugin = [] if _plugin_autoloaded() else ["-p", "harness.pytest_plugin"]
    result = pytester.runpytest_inprocess(
        str(matrix), "--collect-only", "-q", *plugin, "--harness-out", str(pytester.path / "run")
    )
    out = result.stdout.str()
    assert f"m.yaml::matmul[fp16-M256xN256xK256-h100-triton{_installed()}]" in out, out + result.stderr.str()
    assert f"m.yaml::vector_add[fp16-interpret-triton{_installed()}]" in out
    assert result.ret == 0


def test_the_plugin_in_this_process_records_each_build_and_reports_each_case(pytester: pytest.Pytester) -> None:
    """The plugin run by pytest in this process (pytester), static: one record per target's build in results.json,
    each case a passed test in the outcome pytest counts and the JUnit file names."""
    from harness.cli import _plugin_autoloaded

    matrix = write_matrix(pytester.path / "m.yaml", small_matrix("in-process"))
    plugin = [] if _plugin_autoloaded() else ["-p", "harness.pytest_plugin"]
    out, junit = pytester.path / "run", pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess(
        str(matrix), "-q", *plugin, "--harness-out", str(out), "--harness-static-only", f"--junitxml={junit}"
    )
    result.assert_outcomes(passed=2)
    records = json.loads((out / "results.json").read_text())["records"]
    assert sorted((r["target"], r["status"], r["fits"]) for r in records) == [
        ("h100", "ok", True),
        ("mi300x", "ok", True),
    ]
    names = {case.get("name") for case in ET.parse(junit).iter("testcase")}
    assert names == {f"vector_add[fp32-N4096-{t}-triton{_installed()}]" for t in ("h100", "mi300x")}, names


def test_report_merges_runs(run_dir: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = run_dir
    other = tmp_path / "other"
    other.mkdir()
    doc = json.loads((out / "results.json").read_text())
    doc["run"]["host"] = "another-host"
    for rec in doc["records"]:
        rec["host"] = "another-host"
        rec["triton"] = "9.9.9"
    (other / "results.json").write_text(json.dumps(doc))
    proc = call_cli("report", str(out), str(other), "--out", str(tmp_path / "merged.md"))
    assert proc.returncode == 0, proc.stderr
    merged = (tmp_path / "merged.md").read_text()
    assert "9.9.9" in merged and "another-host" in merged
    assert call_cli("report", str(tmp_path / "missing")).returncode == 2
