"""What user code run while a matrix is read can no longer do to the harness's own process or records.

The attacks: a kernel module that prints the import probe's marker and then exits (``validate`` exited 0 with no
output); one that puts another object in ``sys.modules["triton"]`` (every record said ``triton 99.0.0``); a spec
callback that prints the callback probe's marker lines and exits. Captured ops that hang, exit or crash are in
tests/test_ops_capture.py.
"""

from __future__ import annotations

from pathlib import Path

from helpers import DATA, run_cli, write_matrix

COPY = (DATA / "bad_callbacks.py").read_text().split("def hang")[0]
SPEC = (
    "SPEC = KernelSpec(name='k', fn=copy_kernel, dims=('N',), dtypes=('fp32',), tunables=('BLOCK',),\n"
    "                  nvidia_configs=({'BLOCK': 16},), amd_configs=({'BLOCK': 16},), runtime_args=_args,\n"
    "                  grid=lambda s, c: (1,)EXTRA)\n"
)


def _validate(tmp: Path, module: str) -> tuple[int, str]:
    (tmp / "user_kernel.py").write_text(module)
    matrix = write_matrix(
        tmp / "m.yaml",
        "name: user\ntargets: [h100]\nkernels:\n  k:\n    source: user_kernel.py:SPEC\n    dtypes: [fp32]\n"
        "    shapes: [{N: 64}]\n    interpret: false\n",
    )
    proc = run_cli("validate", str(matrix), env={"HARNESS_CALLBACK_TIMEOUT_S": "5"})
    return proc.returncode, proc.stdout + proc.stderr


def test_a_module_that_prints_the_import_probes_marker_and_exits_is_caught(tmp_path: Path) -> None:
    markers = "".join(f"print('harness-probe-imported', {i}, flush=True)\n" for i in range(3))
    markers += "".join(f"print('harness-probe-imported', 'x' * 32, {i}, flush=True)\n" for i in range(3))
    code, said = _validate(tmp_path, "import os\n" + markers + "os._exit(0)\n")
    assert code == 2 and "ended the process (exit code 0)" in said and "user_kernel.py" in said, said


def test_a_callback_that_prints_the_callback_probes_markers_and_exits_is_caught(tmp_path: Path) -> None:
    module = (
        COPY
        + (
            "def sly(*_):\n"
            "    for word in ('imported', 'done'):\n"
            "        print('harness-probe-' + word, flush=True)\n"
            "        print('harness-callbacks-' + word, flush=True)\n"
            "    os._exit(0)\n\n\n"
        )
        + SPEC.replace("EXTRA", ", config_ok=sly")
    )
    code, said = _validate(tmp_path, module)
    assert code == 2 and "config_ok (shape" in said and "ended the process (exit code 0)" in said, said


def test_a_module_that_swaps_the_triton_module_is_refused(tmp_path: Path) -> None:
    import triton

    module = (
        COPY
        + (
            "import types\n"
            "_fake = types.ModuleType('triton')\n"
            "_fake.__version__ = '99.0.0'\n"
            "sys.modules['triton'] = _fake\n\n\n"
        )
        + SPEC.replace("EXTRA", "")
    )
    code, said = _validate(tmp_path, module)
    assert code == 2 and "replaced the triton module" in said and "m.yaml:5:" in said, said
    # the same module without the swap validates, and the version the harness names is its own import's
    code, said = _validate(tmp_path, COPY + SPEC.replace("EXTRA", ""))
    assert code == 0 and f"here {triton.__version__}" in said, said


WITNESS = """
import os
import sys

import triton
import triton.language as tl

from harness.spec import KernelSpec, Pointer, Scalar

LOG = os.environ["WITNESS_LOG"]


def _saw(what):
    with open(LOG, "a") as f:
        f.write(f"{os.getpid()} {what}\\n")


_saw("import")


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _args(shape, dtype):
    _saw("runtime_args")
    return {"x_ptr": Pointer(dtype), "y_ptr": Pointer(dtype), "n": Scalar("i32", shape["N"])}


def _ok(shape, config):
    _saw("config_ok")
    return True


def _grid(shape, config):
    _saw("grid")
    return (triton.cdiv(shape["N"], config["BLOCK"]),)


SPEC = KernelSpec(name="witness", fn=copy_kernel, dims=("N",), dtypes=("fp32",), tunables=("BLOCK",),
                  nvidia_configs=({"BLOCK": 64},), amd_configs=({"BLOCK": 64},), runtime_args=_args,
                  config_ok=_ok, grid=_grid)
"""


def test_the_harness_process_never_runs_user_code(tmp_path: Path) -> None:
    """A spec module that writes its pid at import and in every callback, through validate, list, a whole run
    (``-n 0``: the cases run in the harness's own process) and repro: each pid it wrote is a child's, never the
    harness's — and it wrote some, so the check is not empty."""
    import json
    import os
    import subprocess
    import sys

    from helpers import REPO

    (tmp_path / "witness.py").write_text(WITNESS)
    # a conftest.py beside the matrix is user code too: pytest would import it into the run's own process
    (tmp_path / "conftest.py").write_text(
        "import os\nwith open(os.environ['WITNESS_LOG'], 'a') as f:\n    f.write(f'{os.getpid()} conftest\\n')\n"
    )
    matrix = write_matrix(
        tmp_path / "m.yaml",
        "name: witness\ntargets: [h100]\nkernels:\n  witness:\n    source: witness.py:SPEC\n    dtypes: [fp32]\n"
        "    shapes: [{N: 4096}]\n    interpret: false\n",
    )
    log = tmp_path / "witness.log"
    env = dict(os.environ, PYTHONPATH=str(REPO), WITNESS_LOG=str(log), HARNESS_CACHE_DIR=str(tmp_path / "hc"),
               TRITON_CACHE_DIR=str(tmp_path / "tc"))  # fmt: skip
    env.pop("TRITON_INTERPRET", None)
    run = tmp_path / "run"
    commands = [
        ["validate", str(matrix)],
        ["list", str(matrix)],
        ["run", str(matrix), "--out", str(run), "-n", "0", "--static-only"],
    ]
    for args in commands:
        proc = subprocess.Popen([sys.executable, "-m", "harness", *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        out, errs = proc.communicate(timeout=600)
        assert proc.returncode == 0, (args, out[-2000:], errs[-2000:])
        seen = log.read_text().split() if log.exists() else []
        assert str(proc.pid) not in seen[::2], (args, "user code ran in the harness's own process")
    case = next(r["case_id"] for r in json.loads((run / "results.json").read_text())["records"])
    proc = subprocess.Popen([sys.executable, "-m", "harness", "repro", str(run), case, "--out", str(tmp_path / "r.py")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    out, errs = proc.communicate(timeout=600)
    assert proc.returncode == 0, errs[-2000:]
    lines = [line.split() for line in log.read_text().splitlines()]
    assert str(proc.pid) not in {pid for pid, _ in lines}
    said = {what for _, what in lines}
    assert {"import", "config_ok", "grid", "runtime_args"} <= said, said  # the callbacks did run, in children
    assert "conftest" not in said  # nor in any child: a matrix's run is its matrix, not a pytest suite


def test_a_run_under_xdist_imports_a_user_module_for_its_facts_once(tmp_path: Path) -> None:
    """The run's process takes the module's facts in one child and shares them with its xdist workers for the run
    (harness.intake.facts): before, each worker imported the module again for the same facts, which costs seconds
    per worker for a library like fla-core. Each import says which kind of child made it."""
    witness = tmp_path / "imports.txt"
    module = (
        "import os, sys\n"
        f"with open({str(witness)!r}, 'a') as _f:\n"
        "    _f.write(('facts' if any('facts.of_spec' in a for a in sys.orig_argv) else 'other') + '\\n')\n"
        + COPY.split("import os", 1)[-1]
        + SPEC.replace("EXTRA", "")
    )
    (tmp_path / "user_kernel.py").write_text(module)
    matrix = write_matrix(
        tmp_path / "m.yaml",
        "name: user\ntargets: [h100]\nkernels:\n  k:\n    source: user_kernel.py:SPEC\n    dtypes: [fp32]\n"
        "    shapes: [{N: 64}, {N: 128}]\n    interpret: false\n",
    )
    proc = run_cli("run", str(matrix), "--out", str(tmp_path / "run"), "-n", "2", "--static-only")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    said = witness.read_text().split()
    assert said.count("facts") == 1, said
    assert "other" in said  # the compile workers imported it to build it, as they must
