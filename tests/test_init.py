"""The door for a newcomer holding a kernel file and no matrix: ``harness run FILE.py`` says what to do in one line,
``harness init`` writes a matrix for a file's KernelSpec or for an op (reading the file as text, never importing it),
and the commands' help names the ways to bring a kernel."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from helpers import DATA, call_cli, run_cli


def test_a_kernel_file_given_to_run_is_one_line_naming_init(tmp_path: Path) -> None:
    kernel = tmp_path / "knob.py"
    shutil.copy(DATA / "gate" / "knob.py", kernel)
    proc = run_cli("run", str(kernel), "--out", str(tmp_path / "run"))
    assert proc.returncode == 2 and not (tmp_path / "run").exists()
    assert proc.stderr.strip() == (
        f"{kernel}:1: a Python file, not a matrix (YAML): `harness init {kernel}` writes a matrix that names the "
        "KernelSpec or the op in it (docs/bring-your-kernel.md)"
    )


def test_init_writes_a_matrix_for_a_files_spec_that_validates(tmp_path: Path) -> None:
    shutil.copy(DATA / "gate" / "knob.py", tmp_path / "knob.py")
    proc = run_cli("init", "knob.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load((tmp_path / "knob.yaml").read_text())
    assert doc["kernels"] == {"knob": {"source": "knob.py:SPEC", "dtypes": ["fp32"], "shapes": [{"N": 1024}]}}
    assert call_cli("validate", "knob.yaml", cwd=tmp_path).returncode == 0
    again = run_cli("init", "knob.py", cwd=tmp_path)  # never overwritten
    assert (
        again.returncode == 2
        and again.stderr.strip() == "harness: init: knob.yaml exists; name another file with --out"
    )


def test_init_of_a_file_without_a_spec_names_its_kernels_and_the_two_ways(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef add(x, BLOCK: tl.constexpr):\n    pass\n"
    )
    proc = run_cli("init", "plain.py", cwd=tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "plain.yaml").exists()
    assert proc.stderr.strip() == (
        "harness: init: plain.py: no KernelSpec in it (its decorated functions: add); a matrix names a KernelSpec "
        "or an op: docs/bring-your-kernel.md shows both"
    )


def test_init_of_an_op_writes_its_entry_and_the_inputs_function_to_complete(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text("def double(x):\n    return 2 * x\n")
    proc = run_cli("init", "lib.py:double", "--out", "m.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    entry = yaml.safe_load((tmp_path / "m.yaml").read_text())["kernels"]["double"]
    assert entry["op"] == "lib.py:double" and entry["inputs"] == "m_inputs.py:inputs"
    checked = call_cli("validate", "m.yaml", cwd=tmp_path)  # until the inputs function is written, it says so
    assert (
        checked.returncode == 2
        and "write the arguments of lib.py:double for a shape" in checked.stdout + checked.stderr
    )


def test_the_help_names_the_ways_to_bring_a_kernel() -> None:
    run_help = " ".join(run_cli("run", "--help").stdout.split())  # as argparse wraps it
    assert "source: FILE.py:SPEC" in run_help and "op: module:function" in run_help and "harness init" in run_help
    assert "--fail-on KINDS" in run_help
    assert "matrix YAML files" in " ".join(call_cli("validate", "--help").stdout.split())
    assert "KernelSpec" in run_cli("init", "--help").stdout


def test_what_init_writes_holds_names_as_data(tmp_path: Path) -> None:
    """A module path with quotes, a newline and YAML's own characters is a value in the matrix and a string in the
    inputs module, never text spliced into either."""
    op = 'evil"\nname: x # ]:fn'
    proc = run_cli("init", op, "--out", "m.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load((tmp_path / "m.yaml").read_text())
    assert doc["name"] == "m" and doc["kernels"]["fn"]["op"] == op
    namespace: dict[str, object] = {}
    exec(compile((tmp_path / "m_inputs.py").read_text(), "m_inputs.py", "exec"), namespace)
    assert namespace["OP"] == op and set(namespace) >= {"inputs"}
