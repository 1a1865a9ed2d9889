"""`harness validate`: every kind of bad input gets `file:line: message`, exit 2, no traceback."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from helpers import call_cli, run_cli, write_matrix

GOOD = """\
name: t
targets: [h100, mi300x]
kernels:
  matmul:
    dtypes: [fp16]
    shapes:
      - {M: 64, N: 64, K: 64}
    configs:
      - {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, GROUP_M: 8, num_warps: 4, num_stages: 2}
"""

# (name, text, expected line, expected message fragment)
BAD = [
    ("bad_yaml", GOOD.replace("dtypes: [fp16]", "dtypes: [fp16"), 6, "flow sequence started on line 5"),
    ("unknown_kernel", GOOD.replace("  matmul:", "  matmull:"), 4, "unknown kernel 'matmull'"),
    ("unknown_target", GOOD.replace("[h100, mi300x]", "[h100, mi300]"), 2, "unknown target 'mi300'"),
    ("misspelt_option", GOOD.replace("num_warps: 4", "num_warp: 4"), 9, "unknown option 'num_warp'"),
    ("negative_size", GOOD.replace("M: 64, N", "M: -64, N"), 7, "'M' of matmul must be a positive integer"),
    ("wrong_type", GOOD.replace("dtypes: [fp16]", "dtypes: fp16"), 5, "field 'dtypes' must be a list"),
    ("unknown_dtype", GOOD.replace("dtypes: [fp16]", "dtypes: [fp8]"), 5, "dtype 'fp8' not supported"),
    ("unknown_key", GOOD.replace("name: t", "name: t\ntargetz: [h100]"), 2, "unknown key 'targetz'"),
    ("duplicate_key", GOOD.replace("name: t", "name: t\nname: u"), 2, "duplicate key 'name'"),
    ("missing_dim", GOOD.replace("{M: 64, N: 64, K: 64}", "{M: 64, N: 64}"), 7, "lacks 'K'"),
    ("bool_as_size", GOOD.replace("K: 64}", "K: true}"), 7, "'K' of matmul must be a positive integer"),
    ("missing_tunable", GOOD.replace("GROUP_M: 8, ", ""), 9, "config lacks GROUP_M"),
    ("bad_num_warps", GOOD.replace("num_warps: 4", "num_warps: 3"), 9, "power of two"),
    (
        "amd_option_typo",
        GOOD.replace("num_stages: 2}", "num_stages: 2, waves_per_cu: 2}"),
        9,
        "did you mean 'waves_per_eu'",
    ),
]


@pytest.mark.parametrize("name,text,line,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_matrix_reports_file_line_message(tmp_path: Path, name: str, text: str, line: int, fragment: str) -> None:
    path = write_matrix(tmp_path / f"{name}.yaml", text)
    proc = call_cli("validate", str(path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr
    for out in lines:
        assert re.match(rf"^{re.escape(str(path))}:\d+: .+", out), out
    assert any(out.startswith(f"{path}:{line}: ") and fragment in out for out in lines), lines


def test_good_matrix_validates(tmp_path: Path) -> None:
    proc = call_cli("validate", str(write_matrix(tmp_path / "good.yaml", GOOD)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout


def test_shipped_matrices_validate() -> None:
    proc = call_cli("validate", "matrices/smoke.yaml", "matrices/nightly.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_problem_is_reported_not_just_the_first(tmp_path: Path) -> None:
    text = GOOD.replace("[h100, mi300x]", "[h1000]").replace("num_warps: 4", "num_warpz: 4")
    proc = call_cli("validate", str(write_matrix(tmp_path / "two.yaml", text)))
    assert proc.returncode == 2
    assert len(proc.stdout.strip().splitlines()) >= 2, proc.stdout


def test_missing_file_and_bad_run_input_exit_2(tmp_path: Path) -> None:
    proc = call_cli("validate", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2 and "cannot read the matrix" in proc.stdout and "Traceback" not in proc.stderr
    bad = write_matrix(tmp_path / "bad.yaml", GOOD.replace("  matmul:", "  matmull:"))
    proc = run_cli("run", str(bad), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and f"{bad}:4: unknown kernel" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    proc = run_cli("run", "--targets", "h100,rtx9090", "--out", str(tmp_path / "out2"))
    assert proc.returncode == 2 and "rtx9090" in proc.stderr and "Traceback" not in proc.stderr


def test_targets_command_prints_the_catalogue_with_sources() -> None:
    proc = call_cli("targets", "--sources")
    assert proc.returncode == 0, proc.stderr
    for name in ("h100", "h200", "a100", "b200", "mi300x", "mi250x", "mi355x"):
        assert name in proc.stdout
    assert "232448" in proc.stdout and "65536" in proc.stdout and "CUDA C++ Programming Guide" in proc.stdout
    # which targets take captures (ops: and compiled: entries): every one with a virtual device, b200 not yet
    assert (
        "captures (ops: and compiled: entries) take h100, h200, a100, mi300x, mi355x, mi250x; not b200" in proc.stdout
    )


def test_a_misspelled_function_is_said_at_its_line_with_the_name_meant(tmp_path: Path) -> None:
    """A compiled entry's ``fn:`` naming what its file does not define: one line at the ``fn:`` line with the
    nearest name the file defines, read from the file (its import, torch's and a capture child's are not waited
    for: the inputs function would sleep for ten minutes if it ran), exit 2; ``harness run`` makes no folder."""
    (tmp_path / "m.py").write_text(
        "import time\n\ndef cross_entropy(x):\n    return x\n\ndef inputs(*a):\n    time.sleep(600)\n"
    )
    (tmp_path / "m.yaml").write_text(
        "name: m\ntargets: [h100]\ncompiled:\n  e:\n    inputs: m.py:inputs\n    fn: m.py:cross_entropi\n"
        "    shapes: [{N: 8}]\n    dtypes: [fp32]\n"
    )
    started = time.perf_counter()
    proc = run_cli("run", str(tmp_path / "m.yaml"), "--out", str(tmp_path / "run"), "-n", "0")
    elapsed = time.perf_counter() - started
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert f"{tmp_path / 'm.yaml'}:6: fn: m.py defines no 'cross_entropi'; did you mean 'cross_entropy'?" in (
        proc.stdout + proc.stderr
    )
    assert not (tmp_path / "run").exists() and elapsed < 60, elapsed  # said at once (0.6 s here: performance.md)


def test_a_compiled_entry_for_a_target_without_a_face_is_one_line_before_any_capture(tmp_path: Path) -> None:
    """b200 has no virtual device: said where the matrix is read, naming the targets that have one, before a capture
    child is started (the entry's function would hang the child if it were ever imported)."""
    (tmp_path / "m.py").write_text("import time\ndef f(x):\n    return x\ndef inputs(*a):\n    time.sleep(600)\n")
    (tmp_path / "m.yaml").write_text(
        "name: m\ntargets: [mi250x, b200]\ncompiled:\n  e:\n    fn: m.py:f\n    inputs: m.py:inputs\n"
        "    shapes: [{N: 8}]\n    dtypes: [fp32]\n"
    )
    proc = call_cli("validate", str(tmp_path / "m.yaml"))
    said = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]  # validate says it on stdout
    assert proc.returncode == 2 and len(said) == 1, proc.stdout + proc.stderr
    assert said[0].startswith(f"{tmp_path / 'm.yaml'}:2: compiled: entries cannot be captured for b200")
    assert "mi250x" in said[0] and "Traceback" not in proc.stderr
    from harness.intake.virtual_device import face

    mi250x = face.of("mi250x")  # a GCD of the MI250X, as ROCm torch reports it (faces.yaml cites each value)
    assert (mi250x.gcn_arch, mi250x.capability, mi250x.sm_count, mi250x.warp_size) == (
        "gfx90a:sramecc+:xnack-",
        (9, 0),
        110,
        64,
    )
