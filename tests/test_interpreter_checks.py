"""The interpreter checks the kernel, not its own gaps: Python floats and libdevice work, an interpreter
limitation is ``interpret-unsupported`` (the run passes, the reason kept), and known failures match there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import DATA, call_cli, run_cli, write_matrix

KERNELS = DATA / "interpreter_kernels.py"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, list[dict]]:
    tmp = tmp_path_factory.mktemp("interp")
    matrix = write_matrix(
        tmp / "m.yaml",
        f"""\
name: interp
targets: [h100]
kernels:
  scaled_tanh: {{source: "{KERNELS}:SPEC_FLOAT", dtypes: [fp32], shapes: [{{N: 4096}}]}}
  bessel: {{source: "{KERNELS}:SPEC_BESSEL", dtypes: [fp32], shapes: [{{N: 4096}}]}}
  wrong: {{source: "{KERNELS}:SPEC_WRONG", dtypes: [fp32], shapes: [{{N: 4096}}]}}
known_failures:
  - {{kernel: wrong, target: interpret, reason: "reference off by one on purpose (the test's known failure)"}}
""",
    )
    out = tmp / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    records = json.loads((out / "results.json").read_text())["records"]
    return proc.returncode, proc.stdout, [r for r in records if r["mode"] == "interpret"]


def _one(records: list[dict], kernel: str) -> dict:
    (rec,) = [r for r in records if r["kernel"] == kernel]
    return rec


def test_python_floats_and_libdevice_pass(run: tuple[int, str, list[dict]]) -> None:
    rec = _one(run[2], "scaled_tanh")
    assert rec["status"] == "ok", rec.get("error")
    assert rec["correctness"]["max_abs_err"] < 1e-5


def test_an_interpreter_limitation_is_its_own_status_and_does_not_fail_the_run(
    run: tuple[int, str, list[dict]],
) -> None:
    code, stdout, records = run
    rec = _one(records, "bessel")
    assert rec["status"] == "interpret-unsupported" and "interpreter" in rec["error"], rec
    assert code == 0, stdout[-2000:]  # and the known failure below is expected: nothing fails the run


def test_a_known_failure_matches_an_interpreter_case(run: tuple[int, str, list[dict]]) -> None:
    rec = _one(run[2], "wrong")
    assert rec["status"] == "mismatch" and rec["expected_failure"].startswith("reference off by one")


def test_a_kernel_error_in_its_own_code_stays_the_kernels() -> None:
    """The classifier: raised in the kernel's source, an AttributeError is the kernel's."""
    from harness.support.interpreter_patches import interpreter_limitation

    try:
        None.missing  # noqa: B018 - an AttributeError raised here, outside the triton package
    except AttributeError as exc:
        assert interpreter_limitation(exc) == ""
    assert interpreter_limitation(ValueError("x")) == ""


def test_validate_refuses_a_launch_that_passes_another_stride(tmp_path: Path) -> None:
    """One launch captured on a CPU (nothing runs): the padded stride it passes is not the one declared."""
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: stride
targets: [h100]
kernels:
  rows: {{source: "{DATA / "stride_mismatch_kernel.py"}:SPEC", dtypes: [fp32], shapes: [{{M: 64, N: 1000}}]}}
""",
    )
    proc = call_cli("validate", str(matrix))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "kernel rows: spec and launch disagree: stride: runtime_args declares 100, launch passes 108" in proc.stdout
        and "Traceback" not in proc.stdout + proc.stderr
    )
