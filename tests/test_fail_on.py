"""``harness run --fail-on KINDS``: a CI job gates on findings without parsing results.json, and every run's last
line counts its configs by finding kind. Real static runs of two small kernels, one config of each kind:

- vector_add at 32 warps: 2,048 threads exceed MI300X's 1,024-thread workgroup and fit H100's (exceeds, one-vendor);
- ``tests/data/gate/knob.py``: fits under Triton's defaults, fails to compile under an opt-in environment of h100
  (at-risk); narrowed by ``-k`` to that environment alone, its h100 verdict has no deciding build (incomplete);
- vector_add with a 1,000-wide block: ``tl.arange`` refuses it on every target (failed, which fails its cases);
- every config of the matrix below asks for no check (``interpret: false``, ``--static-only``): not-checked, with
  that reason said; a failed config counts as failed only.

A finished run resumed runs nothing and is gated again, so each kind is checked on the same records.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DATA, run_cli, write_matrix

from harness.analysis.gate import NONE_ASKED

MATRIX = f"""\
name: gate
targets: [h100, mi300x]
environments:
  h100: [default, {{name: nolines, env: {{TRITON_DISABLE_LINE_INFO: "1"}}}}]
kernels:
  vector_add:
    dtypes: [fp32]
    shapes: [{{N: 4096}}]
    interpret: false
    environments: {{h100: [default]}}
    configs: [{{BLOCK: 1024, num_warps: 32}}, {{BLOCK: 256, num_warps: 4}}]
  knob:
    source: {DATA / "gate" / "knob.py"}:SPEC
    dtypes: [fp32]
    shapes: [{{N: 4096}}]
    interpret: false
"""


def _last(proc) -> str:  # type: ignore[no-untyped-def]
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("gate")
    out = tmp / "run"
    proc = run_cli("run", str(write_matrix(tmp / "m.yaml", MATRIX)), "--out", str(out), "-n", "0", "--static-only")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]  # findings are not failures
    assert f"harness: 3 config(s) not checked: {NONE_ASKED}" in " ".join(proc.stdout.split()), proc.stdout[-2000:]
    assert _last(proc) == ("harness: 3 configs: 1 exceeds, 1 one-vendor, 1 at-risk, 3 not-checked · exit 0"), (
        proc.stdout[-2000:]
    )
    return out


@pytest.mark.parametrize(
    ("kinds", "code", "said"),
    [
        ("exceeds", 5, "exceeds found"),
        ("one-vendor", 5, "one-vendor found"),
        ("at-risk", 5, "at-risk found"),
        ("failed", 0, "none found"),
        ("incomplete", 0, "none found"),
        ("failed,at-risk", 5, "at-risk found"),
        ("not-checked", 5, "not-checked found"),
        ("any", 5, "exceeds, one-vendor, at-risk, not-checked found"),
    ],
)
def test_each_kind_trips_the_gate_only_when_the_run_has_it(run: Path, kinds: str, code: int, said: str) -> None:
    proc = run_cli(
        "run", str(run.parent / "m.yaml"), "--resume", str(run), "-n", "0", "--static-only", "--fail-on", kinds
    )
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _last(proc).endswith(f"--fail-on {kinds}: {said} · exit {code}"), _last(proc)


def test_an_opt_in_build_alone_is_incomplete_and_trips_it(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path / "m.yaml", MATRIX)
    out = tmp_path / "run"
    argv = ["run", str(matrix), "--out", str(out), "-n", "0", "--static-only", "-k", "nolines"]
    proc = run_cli(*argv, "--fail-on", "incomplete")
    assert proc.returncode == 5, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _last(proc) == (
        "harness: 1 configs: 1 incomplete, 1 not-checked · --fail-on incomplete: incomplete found · exit 5"
    )


def test_a_failed_build_fails_the_run_and_is_counted(tmp_path: Path) -> None:
    matrix = write_matrix(
        tmp_path / "m.yaml",
        "name: failing\ntargets: [h100]\nkernels:\n  vector_add:\n    dtypes: [fp32]\n    shapes: [{N: 4096}]\n"
        "    interpret: false\n    configs: [{BLOCK: 1000, num_warps: 4}]\n",
    )
    proc = run_cli(
        "run", str(matrix), "--out", str(tmp_path / "run"), "-n", "0", "--static-only", "--fail-on", "failed"
    )
    assert proc.returncode == 1, proc.stdout[-2000:]  # a failed case is exit 1 with or without the gate
    assert _last(proc) == "harness: 1 configs: 1 failed · --fail-on failed: failed found · exit 1"


def test_a_kind_that_does_not_exist_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = run_cli("run", "--out", str(tmp_path / "run"), "--fail-on", "exceeds,slow")
    assert proc.returncode == 2 and not proc.stdout
    assert proc.stderr.strip() == (
        "harness: --fail-on: 'slow' is not a finding kind (kinds: failed, exceeds, one-vendor, at-risk, "
        "spills, incomplete, not-checked, or any)"
    )
