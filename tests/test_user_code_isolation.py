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
