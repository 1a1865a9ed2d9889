"""Ops captured with no spec (``op:`` / ``inputs:`` / ``reference:`` entries), on a small library written here.

The library below has what real ones have: a Python op that allocates its output, computes strides and a
constexpr, and launches two plain ``@triton.jit`` kernels with launch options of its own. What the capture
records is then compiled for real (h100) and checked against Triton's own compile of the same launch; the
ways an op can fail to capture end in a one-line matrix error. The H200 half is the stored run of fla-core's
ops (docs/performance.md, run AO).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from helpers import DATA, run_cli, write_matrix

pytest.importorskip("torch")

LIBRARY = '''
import torch
import triton
import triton.language as tl


@triton.jit
def square(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * x, mask=offs < n)


@triton.jit
def add_scaled(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, y + a * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def square_plus(x, a=0.5):
    """y = x**2 + a*x, in two launches (as a library might)."""
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024 if n >= 4096 else 256
    square[(triton.cdiv(n, block),)](x, y, n, BLOCK=block, num_warps=2)
    add_scaled[(triton.cdiv(n, block),)](x, y, n, a, BLOCK=block)
    return y


def square_twice(x, a=0.5):
    """square_plus with the square made twice, identically (a library that recomputes a buffer it discarded)."""
    y = torch.empty_like(x)
    n = x.numel()
    square[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, num_warps=2)
    square[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, num_warps=2)
    add_scaled[(triton.cdiv(n, 1024),)](x, y, n, a, BLOCK=1024)
    return y


def no_launch(x):
    return x * 2


def checks_its_input(x):
    assert x.shape[0] % 3 == 0, "rows must be a multiple of 3"
    return square_plus(x)


def by_size(x):
    if x.numel() > 5000:
        return square_plus(x)
    y = torch.empty_like(x)
    square[(1,)](x, y, x.numel(), BLOCK=8192)
    return y
'''

INPUTS = """
from harness.torchutil import randn


def inputs(shape, dtype, device, generator):
    return (randn((shape["R"], shape["C"]), dtype, device, generator),)


def reference(x):
    return x * x + 0.5 * x
"""


def _matrix(tmp_path: Path, kernels: str) -> Path:
    (tmp_path / "toylib.py").write_text(LIBRARY)
    (tmp_path / "toy_inputs.py").write_text(INPUTS)
    return write_matrix(tmp_path / "m.yaml", "name: toy\ntargets: [h100]\nkernels:\n" + kernels)


def test_each_kernel_an_op_launches_becomes_a_case_built_as_triton_builds_it(tmp_path: Path) -> None:
    matrix = _matrix(
        tmp_path,
        """\
  toy:
    op: toylib.py:square_plus
    inputs: toy_inputs.py:inputs
    reference: toy_inputs.py:reference
    dtypes: [fp32]
    shapes: [{R: 64, C: 128}]
  rep:
    op: toylib.py:square_twice
    inputs: toy_inputs.py:inputs
    dtypes: [fp32]
    shapes: [{R: 64, C: 128}]
""",
    )
    out = tmp_path / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = [r for r in json.loads((out / "results.json").read_text())["records"] if r["mode"] == "compile"]
    by_kernel = {r["kernel"]: r for r in records}
    # one entry per kernel launched, named after it; a launch made twice identically is one build
    assert sorted(by_kernel) == ["rep.add_scaled", "rep.square", "toy.add_scaled", "toy.square"]
    assert len(records) == 4
    sq, add = by_kernel["toy.square"], by_kernel["toy.add_scaled"]
    # the op's own launch options are the one config of a kernel without an autotune list
    assert sq["config"] == {"num_warps": 2} and add["config"] == {}
    assert sq["captured"]["launches"] == 2 and sq["captured"]["kernels"] == ["add_scaled", "square"]
    assert sq["captured"]["distinct_launches"] == 2 and sq["captured"]["repeated"] == []
    # every launch the op makes is counted, and the record says which were the same launch again
    rep = by_kernel["rep.square"]["captured"]
    assert (rep["launches"], rep["distinct_launches"]) == (3, 2), rep
    assert rep["repeated"] == ["square launch 1: calls 1, 2"], rep
    # what the op passed: the constexpr it computed, the Python float as fp32, n=8192 divisible by 16
    assert sq["specialisation"]["BLOCK"]["value"] == 1024 and add["specialisation"]["a"]["type"] == "fp32"
    assert ["tt.divisibility", 16] in sq["specialisation"]["n"]["attrs"]

    # Triton's own compile of the same launch (its launcher's binder, a real warmup-free compile) agrees
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget

    mod_spec = importlib.util.spec_from_file_location("toylib_check", tmp_path / "toylib.py")
    lib = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(lib)
    src = triton.compiler.ASTSource(
        lib.square,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 1024},
        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]},
    )
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 2})
    ttir = (out / sq["artifacts"]["ttir"]["path"]).read_text()
    assert compiled.asm["ttir"] == ttir


def test_an_op_is_checked_in_the_interpreter_against_its_reference(tmp_path: Path) -> None:
    """``interpret:`` shapes of an op entry: the op itself runs under Triton's interpreter on CPU tensors and is
    compared with the entry's reference; a reference the op does not meet is a mismatch, not a pass."""
    (tmp_path / "wrong.py").write_text("def reference(x):\n    return x * x + 0.25 * x\n")
    body = (
        "    op: toylib.py:square_plus\n    inputs: toy_inputs.py:inputs\n    reference: {ref}\n"
        "    dtypes: [fp32]\n    shapes: [{{R: 64, C: 128}}]\n    interpret: [{{R: 8, C: 16}}, {{R: 3, C: 100}}]\n"
    )
    matrix = _matrix(
        tmp_path,
        "  toy:\n" + body.format(ref="toy_inputs.py:reference") + "  wrong:\n" + body.format(ref="wrong.py:reference"),
    )
    out = tmp_path / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # the wrong reference's cases fail
    records = [r for r in json.loads((out / "results.json").read_text())["records"] if r["mode"] == "interpret"]
    status = {r["kernel"]: r["status"] for r in records}
    assert status == {
        "toy.square": "ok",
        "toy.add_scaled": "ok",
        "wrong.square": "mismatch",
        "wrong.add_scaled": "mismatch",
    }
    ok = next(r for r in records if r["kernel"] == "toy.square")
    assert [c["shape"] for c in ok["correctness"]["checks"]] == [{"R": 8, "C": 16}, {"R": 3, "C": 100}]


BAD_ENTRIES = {  # entry body -> what its one-line error says
    "no_launch": ("    op: toylib.py:no_launch\n    inputs: toy_inputs.py:inputs\n", "the op made no Triton launch"),
    "raises": (
        "    op: toylib.py:checks_its_input\n    inputs: toy_inputs.py:inputs\n",
        "AssertionError: rows must be a multiple of 3",
    ),
    "both": (
        "    op: toylib.py:square_plus\n    source: toylib.py:SPEC\n    inputs: toy_inputs.py:inputs\n",
        "gives both 'source' (a spec) and 'op'",
    ),
    "missing": (
        "    op: toylib.py:nothing_here\n    inputs: toy_inputs.py:inputs\n",
        "has no attribute 'nothing_here'",
    ),
    "no_inputs": ("    op: toylib.py:square_plus\n", "needs 'inputs: file.py:ATTR'"),
    "configs": (
        "    op: toylib.py:square_plus\n    inputs: toy_inputs.py:inputs\n    configs: [{num_warps: 8}]\n",
        "its configs are the launches the library makes under each target's virtual device",
    ),
}


def test_an_op_that_cannot_be_captured_says_why_in_one_line(tmp_path: Path) -> None:
    """One validate over every bad entry (each a matrix of its own): a file:line message each, no traceback."""
    files = {}
    for name, (body, _) in BAD_ENTRIES.items():
        folder = tmp_path / name
        folder.mkdir()
        files[name] = _matrix(folder, "  toy:\n" + body + "    dtypes: [fp32]\n    shapes: [{R: 64, C: 128}]\n")
    split = tmp_path / "split"
    split.mkdir()
    files["split"] = _matrix(
        split,
        "  toy:\n    op: toylib.py:by_size\n    inputs: toy_inputs.py:inputs\n"
        "    dtypes: [fp32]\n    shapes: [{R: 64, C: 128}, {R: 8, C: 8}]\n",
    )
    proc = run_cli("validate", *map(str, files.values()))
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    expect = {
        **{k: v[1] for k, v in BAD_ENTRIES.items()},
        "split": "give the shapes that take each path as entries of their own",
    }
    for name, path in files.items():
        mine = [x for x in proc.stdout.splitlines() if x.startswith(f"{path}:")]
        assert mine and expect[name] in mine[0], (name, mine)
    raised = next(x for x in proc.stdout.splitlines() if x.startswith(f"{files['raises']}:"))
    assert "capturing op toylib.py:" in raised and "as on h100" in raised and "cuda (virtual):" in raised, raised
    assert "cpu:" in raised, raised


def test_fla_ops_on_the_h200_were_checked_and_timed_per_config_against_the_op_as_shipped() -> None:
    """Stored run AO: fla-core's l2norm_fwd, matmul and swiglu_fwd brought as ops on an H200. Every config of
    each library autotune list was checked against the torch reference and timed; each op has a winner and the
    op as shipped (fla's own autotuning) as its baseline; every launched binary is the static artifact."""
    doc = json.loads(gzip.decompress((DATA / "h200_ops" / "results.json.gz").read_bytes()))
    records = doc["records"]
    lists = {"fla_l2norm_op": 6, "fla_matmul_op": 8, "fla_swiglu_op": 30}
    for kernel, n_configs in lists.items():
        builds = [r for r in records if r["mode"] == "compile" and r["kernel"] == kernel]
        assert len(builds) == n_configs and all(r["captured"]["device"] == "meta" for r in builds)
        assert all(r["runtime"]["correctness"]["status"] == "ok" for r in builds), kernel
        assert all(r["runtime"]["launch_parity"] == "identical" for r in builds), kernel
        (tune,) = [r for r in records if r["mode"] == "tune" and r["kernel"] == kernel]
        assert tune["status"] == "ok" and tune["runtime"]["timing_method"] == "sustained"
        name, baseline = next(iter(tune["runtime"]["baselines"].items()))
        assert name.endswith(" as shipped") and baseline["status"] == "ok" and baseline["matches_reference"]
        assert 0.8 < baseline["speedup"] < 1.25  # the library's own pick of the same list


def test_stored_h200_run_every_shape_and_launch_of_a_captured_op_is_the_binary_that_ran() -> None:
    """Run BG (docs/performance.md): fla-core's L2 norm at two shapes (its autotune list tuned) and conch's fp8
    quantiser launched twice per call at two shapes, from empty caches on the H200: every config of every shape
    and launch correct, and the launched binary the static artifact (sha256), each tied to its launch."""
    doc = json.loads(gzip.decompress((DATA / "h200_vendor" / "results.json.gz").read_bytes()))
    builds = [r for r in doc["records"] if r["mode"] == "compile"]
    shapes = {(r["kernel"], json.dumps(r["shape"], sort_keys=True)) for r in builds}
    assert {k for k, _ in shapes} == {"fla_l2norm", "conch_qk.launch1", "conch_qk.launch2"} and len(shapes) == 6
    assert len([r for r in builds if r["kernel"] == "fla_l2norm"]) == 12  # 6 configs (NVIDIA's list) per shape
    for r in builds:
        assert r["captured"]["face"] == "h200" and r["runtime"]["correctness"]["status"] == "ok", r["kernel"]
        assert r["runtime"]["launch_parity"] == "identical", (r["kernel"], r["shape"], r["config"])
    tunes = [r for r in doc["records"] if r["mode"] == "tune"]
    assert len(tunes) == 6 and all(r["status"] == "ok" for r in tunes)


MISBEHAVING = """
import os, signal, sys, time


def hangs(x):
    time.sleep(3600)


def exits(x):
    os._exit(0)


def sys_exits(x):
    sys.exit(0)


def crashes(x):
    os.kill(os.getpid(), signal.SIGSEGV)


def prints_the_markers_and_exits(x):
    for word in ("imported", "done"):
        print("harness-probe-" + word, flush=True)
        print("harness-callbacks-" + word, flush=True)
    os._exit(0)
"""


def test_an_op_that_hangs_exits_or_crashes_while_captured_is_one_line(tmp_path: Path) -> None:
    """The capture runs first in a child: each bad op is a file:line error naming it and the shape, exit 2, and the
    good entry beside it in the same matrix is not what the error names; nothing hangs."""
    files = {}
    for name, why in (
        ("hangs", "did not return within 10 s (it hangs?)"),
        ("exits", "ended the process (exit code 0)"),
        ("crashes", "killed the process (SIGSEGV)"),
        ("prints_the_markers_and_exits", "ended the process (exit code 0)"),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "bad_ops.py").write_text(MISBEHAVING)
        files[name] = (
            _matrix(
                folder,
                f"  toy:\n    op: toylib.py:square_plus\n    inputs: toy_inputs.py:inputs\n"
                f"    dtypes: [fp32]\n    shapes: [{{R: 64, C: 128}}]\n"
                f"  bad:\n    op: bad_ops.py:{name}\n    inputs: toy_inputs.py:inputs\n"
                f"    dtypes: [fp32]\n    shapes: [{{R: 64, C: 128}}]\n",
            ),
            why,
        )
    # 10 s: the good entry's own capture (a Triton JIT under the face) passed 3 s on a loaded 2-core CI machine
    proc = run_cli("validate", *(str(p) for p, _ in files.values()), env={"HARNESS_CALLBACK_TIMEOUT_S": "10"},
                   timeout=600)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Traceback" not in said, said[-3000:]
    for name, (path, why) in files.items():
        mine = [x for x in proc.stdout.splitlines() if x.startswith(f"{path}:")]
        assert len(mine) == 1, (name, *mine)  # one per element: pytest's repr of a list elides its middle
        assert f"capturing op bad_ops.py:{name} (as on h100) for shape" in mine[0] and why in mine[0], (name, mine)
        assert f"{path}:10:" in mine[0]  # the bad entry's op line, not the good entry's


def test_a_library_is_imported_once_per_face_and_an_op_that_ends_its_child_costs_only_itself(tmp_path: Path) -> None:
    """Every op of a matrix is captured for a target in one child wearing its face (torch and the library imported
    once per target, not once per op); an op that ends that child is its own error, and the op listed after it is
    captured in the next child, not reported failed."""
    log = tmp_path / "imports.log"
    (tmp_path / "toylib.py").write_text(
        f"import os\nwith open({str(log)!r}, 'a') as _f:\n"
        "    _f.write(f\"{os.getpid()} {os.environ.get('HARNESS_FACE')}\\n\")\n" + LIBRARY + "\n\ndef exits(x):\n"
        "    os._exit(0)\n"
    )
    (tmp_path / "toy_inputs.py").write_text(INPUTS)
    entry = (
        "    op: toylib.py:{}\n    inputs: toy_inputs.py:inputs\n    dtypes: [fp32]\n    shapes: [{{R: 64, C: 128}}]\n"
    )
    good = write_matrix(
        tmp_path / "good.yaml",
        "name: good\ntargets: [h100, mi300x]\nkernels:\n"
        + "".join(f"  {op}:\n" + entry.format(op) for op in ("square_plus", "by_size", "checks_its_input_x3")),
    )
    (tmp_path / "toylib.py").write_text(
        (tmp_path / "toylib.py").read_text() + "\n\ndef checks_its_input_x3(x):\n    return square_plus(x[:63])\n"
    )
    proc = run_cli("validate", str(good), env={"HARNESS_CACHE_DIR": str(tmp_path / "cache1")})  # nothing remembered
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    imports = [line.split() for line in log.read_text().splitlines()]
    # one capture child per target, one child reading the captured launches' facts under the first target's face
    assert sorted(face for _, face in imports) == ["h100", "h100", "mi300x"], imports
    assert len({pid for pid, _ in imports}) == 3, imports

    log.unlink()
    bad_first = write_matrix(
        tmp_path / "bad.yaml",
        "name: bad\ntargets: [h100]\nkernels:\n"
        + "".join(f"  {op}:\n" + entry.format(op) for op in ("exits", "by_size")),
    )
    proc = run_cli("validate", str(bad_first), env={"HARNESS_CACHE_DIR": str(tmp_path / "cache2")})
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Traceback" not in said, said[-3000:]
    errors = [x for x in proc.stdout.splitlines() if x.startswith(f"{bad_first}:")]
    assert len(errors) == 1 and "capturing op toylib.py:exits (as on h100)" in errors[0], errors
    assert "ended the process (exit code 0)" in errors[0], errors
    # the exiting op's child, the next one for by_size, the facts child
    assert [face for _, face in (line.split() for line in log.read_text().splitlines())] == ["h100"] * 3


def test_a_capture_is_remembered_against_every_module_of_the_capture_code(tmp_path: Path) -> None:
    """The remembered capture's key covers the whole intake package by listing it, not by a hand-kept list: a
    change to any module (the launch grouping was once missed), to a face's catalogue or to what the captures'
    interpreter checks run with captures again."""
    import shutil

    from harness.intake.launches import op_probe

    package = Path(op_probe.__file__).resolve().parents[1]  # harness/intake, every room in it
    copy = tmp_path / "harness"
    shutil.copytree(package, copy / "intake", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(package.parent / "model", copy / "model", ignore=shutil.ignore_patterns("__pycache__"))
    for checking in ("support/interpreter_patches.py", "authoring/correctness.py"):  # what the checks run with
        (copy / checking).parent.mkdir(exist_ok=True)
        shutil.copy(package.parent / checking, copy / checking)
    before = op_probe.code_stamp(copy / "intake")
    assert before == op_probe.code_stamp(package)  # the copy is the code
    for changed in (
        copy / "intake" / "launches" / "launch_groups.py",
        copy / "intake" / "inductor" / "a_new_module.py",
        copy / "intake" / "a_new_module.py",
        copy / "model" / "faces.yaml",
        copy / "support" / "interpreter_patches.py",
    ):
        previous = op_probe.code_stamp(copy / "intake")
        with changed.open("a") as f:
            f.write("\n# changed\n")
        assert op_probe.code_stamp(copy / "intake") != previous, changed.name
    assert op_probe.code_stamp(copy / "intake") != before
