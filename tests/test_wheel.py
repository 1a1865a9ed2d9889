"""The harness as a wheel: every package in it, the bundled kernels and matrices with it, runnable from anywhere.

A wheel is built from this tree (``python -m build``, isolated, as a release or a user's ``pip install .`` would), installed into
a fresh virtual environment that sees this environment's torch and triton but not this checkout, and then run
from an unrelated directory: ``harness run`` finds its default matrix and kernels inside the installed package,
and an unrelated pytest file passes with the harness's pytest plugin installed beside it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import tomllib
from helpers import REPO


def test_every_package_of_the_tree_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "harness").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel (no pip, no checkout on its path; this environment's packages behind it)."""
    root = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(root / "dist"), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    # the sdist and the wheel built from it, by the bounded backend: nothing it says is deprecated (the license
    # table was, with an end date that would have failed every install)
    said = built.stdout + built.stderr
    assert "deprecat" not in said.lower(), [ln for ln in said.splitlines() if "deprecat" in ln.lower()]
    (wheel,) = (root / "dist").glob("*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=600)
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # torch, triton, pyyaml, pytest from this environment; a path line adds no .pth of it (no editable checkout)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def _python(venv: Path, *args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONDONTWRITEBYTECODE": "1", **extra}
    return subprocess.run(
        [str(venv / "bin" / "python"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.venv
def test_the_installed_harness_runs_its_default_matrix_from_another_directory(installed: Path, tmp_path: Path) -> None:
    where = _python(
        installed,
        "-c",
        "import harness, harness.intake.loader as l; print(harness.__file__); print(l.REPO_KERNELS)",
        cwd=tmp_path,
    )
    module, kernels = where.stdout.split()
    assert str(installed) in module and not module.startswith(str(REPO)), where.stdout + where.stderr
    assert kernels.endswith("harness/_bundled/kernels"), kernels
    # the default matrix's compiled entry is captured whatever -k selects; its host check is not what this tests
    proc = _python(
        installed, "-m", "harness", "run", "-k", "vector_add and h100", "-n", "0", "--out", "run", cwd=tmp_path,
        HARNESS_CHECK_BUDGET_S="0",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads((tmp_path / "run" / "results.json").read_text())["records"]
    assert records and {r["kernel"] for r in records} == {"vector_add"} and all(r["status"] == "ok" for r in records)
    for command in ("run", "validate", "report", "compare", "targets", "history"):
        assert _python(installed, "-m", "harness", command, "--help", cwd=tmp_path).returncode == 0, command


@pytest.mark.venv
def test_an_unrelated_pytest_session_is_untouched_by_the_plugin(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    assert 1 + 1 == 2\n")
    (tmp_path / "settings.yaml").write_text("a: 1\n")  # a YAML file of the user's: not taken for a matrix
    proc = _python(installed, "-X", "importtime", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.yaml", "test_mine.py"]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert any(m.startswith("harness.pytest_plugin") for m in imported)  # the plugin was loaded ...
    assert not {"triton", "torch"} & imported  # ... and imported neither: no matrix was collected


def test_a_copy_inside_another_repository_does_not_record_that_repositorys_commit(tmp_path: Path) -> None:
    """The harness tree without its .git, inside somebody else's git repository: the run's commit is not theirs."""
    import shutil

    outer = tmp_path / "theirs"
    shutil.copytree(REPO / "harness", outer / "vendored" / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    (outer / "README").write_text("their project\n")
    git = ["git", "-C", str(outer), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "theirs"], check=True)
    theirs = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    code = (
        "import harness; from harness.execution.provenance import run_info; print(harness.__file__); "
        "print(repr(run_info('m', 'p', 'h', None).commit))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=outer / "vendored", capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert str(outer) in proc.stdout.splitlines()[0] and theirs not in proc.stdout, proc.stdout
    mine = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    own = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert own and own in mine.stdout  # the harness's own checkout still records its commit


OP_LIBRARY = """
import torch
import triton
import triton.language as tl


@triton.jit
def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def double(x):
    y = torch.empty_like(x)
    twice[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y


def activation(x):
    return torch.nn.functional.gelu(x) * 0.5


def inputs(shape, dtype, device, generator):
    from harness.torchutil import randn

    return (randn((shape["N"],), dtype, device, generator),)
"""


@pytest.mark.venv
def test_the_installed_harness_captures_an_op_and_a_compiled_entry_from_another_directory(
    installed: Path, tmp_path: Path
) -> None:
    """The faces travel in the wheel (package data): an op: entry is captured under h100's virtual device and a
    compiled: entry's Inductor kernels under both faces, from a directory with no checkout in sight."""
    (tmp_path / "mylib.py").write_text(OP_LIBRARY)
    (tmp_path / "ops.yaml").write_text(
        "name: mine\ntargets: [h100]\nkernels:\n  dbl:\n    op: mylib.py:double\n    inputs: mylib.py:inputs\n"
        "    dtypes: [fp32]\n    shapes: [{N: 4096}]\n    interpret: false\n"
    )
    # the harness cache of this suite: the CUDA guard extension a CPU torch needs is built once per torch there
    cache = {"HARNESS_CACHE_DIR": str(Path.home() / ".cache" / "triton-portability-harness")}
    proc = _python(installed, "-m", "harness", "run", "ops.yaml", "-n", "0", "--out", "run", cwd=tmp_path, **cache)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads((tmp_path / "run" / "results.json").read_text())["records"]
    assert {r["kernel"] for r in records} == {"dbl"} and all(r["status"] == "ok" for r in records)
    assert records[0]["captured"]["face"] == "h100" and records[0]["captured"]["launches"] == 1
    (tmp_path / "compiled.yaml").write_text(
        "name: mine\ntargets: [h100, mi300x]\ncompiled:\n  act:\n    fn: mylib.py:activation\n"
        "    inputs: mylib.py:inputs\n    dtypes: [bf16]\n    shapes: [{N: 1048576}]\n"
    )
    proc = _python(installed, "-m", "harness", "compiled", "compiled.yaml", "--out", "c", cwd=tmp_path, **cache)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads((tmp_path / "c" / "results.json").read_text())["records"]
    for target in ("h100", "mi300x"):
        mine = [r for r in records if r["target"] == target]
        assert mine and all(r["inductor"]["kernel"].startswith("triton_poi_fused") for r in mine)
        assert all(r["status"] == "ok" for r in mine) and (tmp_path / "c" / "compiled.md").is_file()
        # each config checked on the CPU from the wheel too (2^20 elements: at the check's limit, inside it)
        assert all(r["correctness"]["checks"][0]["status"] == "ok" for r in mine), [r["correctness"] for r in mine]
