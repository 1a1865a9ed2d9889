"""Kernels as two public libraries ship them (fla-core and torchao, from PyPI), decorators on.

Each spec in ``tests/data/library/`` gives the decorated object itself as ``fn`` and no config space: the
library's own ``@triton.autotune`` list is the space of h100 and mi300x, ``@triton.heuristics`` are evaluated
per build, and each config is forced on the autotuner for the interpreter check. The three kinds: a norm
(fla's L2 norm), an elementwise chain (fla's SwiGLU), ``tl.dot`` GEMMs (fla's, heuristics over autotune; and
torchao's int8 GEMM, autotune over heuristics). Real compiles, real findings: fla builds its lists at import
for the vendor it finds, and their 32-warp entries do not fit a 1024-thread AMD workgroup.

The same run also captures three libraries' ops whose launches differ by vendor, each target's under its virtual
device (the ``*_vendor``, ``conch_qk`` and ``*_k1088`` entries; the second half of this module), checked against the
library's own source of the choice, called in a child that wears the same target's face (not against a rule of the
harness's):

- fla-core asks Triton's driver for the vendor *at import* (``get_current_target``, then
  ``torch.cuda.get_device_capability`` / ``get_device_name`` when it finds CUDA) and builds its L2-norm autotune
  list from the answer: 32 warps on NVIDIA only. Two shapes.
- conch-triton-kernels picks its fp8 format (OCP e4m3 or MI300's "fnuz") and a constexpr (``cxpr_is_rocm``) at
  run time from ``torch.version.hip``; the op quantises Q and K, one kernel launched twice with other constexprs.
- torchao's int8 GEMM is autotune over heuristics: the heuristic (``EVEN_K``) is evaluated per config by Triton's
  own ``Heuristics.run``, so at K = 1088 the configs whose BLOCK_K divides it and those whose does not differ.

One run for both halves: each library is imported once per target face for all its ops (one capture child per
face), not once per module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA, REPO, run_cli

#: the libraries, looked up, not imported: every process that collects this module would otherwise import them (about
#: 4 CPU-seconds), though one runs it
pytestmark = [
    pytest.mark.skipif(find_spec(name) is None, reason=f"{dist} is not installed (pip install {install})")
    for name, dist, install in (
        ("fla", "fla-core", "fla-core einops"),
        ("torchao", "torchao", "torchao"),
        ("conch", "conch-triton-kernels", "conch-triton-kernels"),
    )
]

MATRIX = DATA / "library" / "matrix.yaml"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("lib") / "run"
    proc = run_cli("run", str(MATRIX), "--out", str(out), "-n", "0", timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((out / "results.json").read_text())


def _builds(run: dict, kernel: str, target: str) -> list[dict]:
    return [r for r in run["records"] if r["mode"] == "compile" and r["kernel"] == kernel and r["target"] == target]


def test_the_autotune_list_is_every_targets_space(run: dict) -> None:
    from fla.modules.norm.l2norm import l2norm_fwd_kernel_row
    from torchao.prototype.quantized_training.int8_mm import _scaled_int8_mm_kernel

    from harness.authoring.decorated import config_dict

    for kernel, decorated in (("fla_l2norm", l2norm_fwd_kernel_row), ("torchao_int8_mm", _scaled_int8_mm_kernel)):
        listed = {json.dumps(config_dict(c), sort_keys=True) for c in decorated.configs}
        for target in ("h100", "mi300x"):
            built = {json.dumps(r["config"], sort_keys=True) for r in _builds(run, kernel, target)}
            assert built == listed, (kernel, target)  # duplicates in a library's list are built once
    l2 = _builds(run, "fla_l2norm", "h100")[0]
    assert l2["autotune"]["layers"] == ["Autotuner", "JITFunction"] and l2["autotune"]["key"] == {"D": 4096}


def test_heuristics_are_evaluated_per_build(run: dict) -> None:
    mm = _builds(run, "fla_matmul", "h100")
    assert mm and all(r["status"] == "ok" for r in mm)
    assert mm[0]["autotune"]["layers"] == ["Heuristics", "Autotuner", "JITFunction"]
    assert mm[0]["autotune"]["heuristics"] == {"HAS_ALPHA": False, "HAS_BETA": False}
    assert mm[0]["specialisation"]["HAS_ALPHA"]["value"] is False  # what the compile saw
    int8 = _builds(run, "torchao_int8_mm", "h100")
    assert all(r["autotune"]["heuristics"]["EVEN_K"] == (4096 % r["config"]["BLOCK_K"] == 0) for r in int8)
    assert any(r["resources"].get("mma", 0) or r["resources"].get("wgmma", 0) for r in int8)  # tl.dot on int8


def test_verdicts_as_for_the_projects_own_kernels(run: dict) -> None:
    """fla's 32-warp entries (chosen at import on a machine without an AMD GPU) exceed mi300x's 1024 threads;
    its largest GEMM tile exceeds mi300x's 64 KiB of LDS; all fit h100."""
    for kernel in ("fla_l2norm", "fla_swiglu"):
        for r in _builds(run, kernel, "mi300x"):
            assert (r["fits"] is False) == (r["config"]["num_warps"] == 32), (kernel, r["config_id"], r["flags"])
        assert all(r["fits"] for r in _builds(run, kernel, "h100"))
    big = [r for r in _builds(run, "fla_matmul", "mi300x") if r["config"]["BN"] == 256 and r["config"]["BM"] == 128]
    assert big and all(not r["fits"] and any(f["resource"] == "shared" for f in r["flags"]) for r in big)


def test_the_interpreter_checks_decorated_kernels_with_each_config_forced(run: dict) -> None:
    checked = {(r["kernel"], r["config_id"]): r["status"] for r in run["records"] if r["mode"] == "interpret"}
    assert {k for k, _ in checked} >= {"fla_l2norm", "fla_matmul"}
    assert set(checked.values()) == {"ok"}, checked
    from fla.modules.norm.l2norm import l2norm_fwd_kernel_row

    assert len(l2norm_fwd_kernel_row.configs) == 6  # the library's list is back after every forced launch


def test_forced_config_reaches_the_launch(tmp_path: Path) -> None:
    """Through the autotuner's own run(): the forced config is the one the JIT function receives."""
    import triton
    import triton.language as tl

    from harness.authoring.decorated import forced

    @triton.autotune(configs=[triton.Config({"B": 1}), triton.Config({"B": 2})], key=["x"])
    @triton.jit
    def kernel(x, B: tl.constexpr):
        pass

    got: list[dict] = []

    class Leaf:  # replaces the JITFunction under the autotuner: records what the autotuner launches it with
        def run(self, *args, **kwargs):
            got.append(kwargs)

    kernel.fn = Leaf()
    with forced(kernel, {"B": 2, "num_warps": 8}):
        kernel.run(3)
    assert got[0]["B"] == 2 and got[0]["num_warps"] == 8 and len(kernel.configs) == 2


PAIRS = [
    ("fla_l2norm", "fla_l2norm_op"),
    ("fla_swiglu", "fla_swiglu_op"),
    ("fla_matmul", "fla_matmul_op"),
    ("torchao_int8_mm", "torchao_int8_mm_op"),
]


def _binary(r: dict) -> str:
    art = r["artifacts"]
    return (art.get("cubin") or art.get("hsaco"))["sha256"]


@pytest.mark.parametrize("spec,op", PAIRS)
def test_a_captured_op_builds_the_binaries_its_hand_written_spec_builds(run: dict, spec: str, op: str) -> None:
    """The same kernels brought as the libraries' ops (matrix.yaml's ``*_op`` entries: an inputs function and a
    torch reference, no spec): every config the library launches, on both targets, compiles to the very binary
    (sha256) the hand-written spec's launch description compiles to, with the same verdict. The spec imports the
    library on this CPU host (its CUDA list on every target); the op is captured under each target's face, so on
    mi300x fla launches its AMD list (no 32 warps): a part of the spec's, never a config the spec lacks."""
    for target in ("h100", "mi300x"):
        by_spec = {r["config_id"]: r for r in _builds(run, spec, target)}
        by_op = {r["config_id"]: r for r in _builds(run, op, target)}
        assert by_op and set(by_op) <= set(by_spec), (op, target)
        if target == "h100" or not spec.startswith("fla"):
            assert set(by_op) == set(by_spec), (op, target)
        for config, r in by_op.items():
            assert r["status"] == "ok" and _binary(r) == _binary(by_spec[config]), (op, target, config)
            # launched alike, not only built alike: a constexpr the binary happens not to see (TF32 on a 16-bit dot)
            assert r["specialisation"] == by_spec[config]["specialisation"], (op, target, config)
            assert r["fits"] == by_spec[config]["fits"] and r["captured"]["tuned"] and r["captured"]["face"] == target
    on_amd = {r["config"].get("num_warps") for r in _builds(run, "fla_l2norm_op", "mi300x")}
    assert 32 in {r["config"].get("num_warps") for r in _builds(run, "fla_l2norm", "mi300x")} and 32 not in on_amd


def test_an_ops_records_say_how_it_was_captured(run: dict) -> None:
    r = _builds(run, "fla_matmul_op", "h100")[0]
    said = {k: v for k, v in r["captured"].items() if k != "face_answers"}
    assert said == {
        "op": "fla.ops.utils.matmul:matmul",
        "device": "cuda (virtual)",
        "face": "h100",
        "launch": 1,
        "of": 1,
        "tuned": True,
        "launches": 1,
        "distinct_launches": 1,
        "repeated": [],
        "kernels": ["matmul_kernel"],
    }
    assert r["captured"]["face_answers"]["device_name"] == "NVIDIA H100 80GB HBM3"
    assert not _builds(run, "fla_matmul", "h100")[0].get("captured")
    # the op entries have no interpreter cases: their launches are captured, not run, on a CPU
    assert not [r for r in run["records"] if r["mode"] == "interpret" and r["kernel"].endswith("_op")]


#: what each library's own code answers about its choice, asked under a target's face (:func:`own_answers`)
OWN_QUESTIONS = {
    "fla": (
        "import fla.utils as u\nfrom fla.modules.norm.l2norm import l2norm_fwd_kernel_row as k\n"
        "from harness.authoring.decorated import config_dict  # a triton.Config as the harness writes a config\n"
        "answer = {'configs': sorted(json.dumps(config_dict(c), sort_keys=True) for c in k.configs),"
        " 'amd': u.IS_AMD, 'hopper': u.IS_NVIDIA_HOPPER}"
    ),
    "conch": (
        "import torch\nfrom conch.platforms import detect_current_platform\n"
        "from conch.ops.quantization.fp8 import scaled_fp8_quant\nfrom harness.intake.launches.capture import launches\n"
        "x = torch.empty(4, 64, dtype=torch.float16, device='cuda')\n"
        "with launches():  # the format is the library's Python's choice, made before its launch\n"
        "    y, _ = scaled_fp8_quant(x, torch.ones(1, device='cuda'))\n"
        "answer = {'amd': detect_current_platform().is_amd(), 'fp8': str(y.dtype)}"
    ),
}


@pytest.fixture(scope="module")
def own_answers() -> dict[str, dict[str, Any]]:
    """What the libraries' own code answers (:data:`OWN_QUESTIONS`) in a fresh process wearing each target's face,
    one process per target for both libraries: target -> library -> answer."""
    prelude = "import json\nfrom harness.intake.virtual_device import face\nface.wear_from_env()\nanswers = {}\n"
    code = prelude + "".join(f"{question}\nanswers[{name!r}] = answer\n" for name, question in OWN_QUESTIONS.items())
    found = {}
    for target in ("h100", "mi300x"):
        env = dict(os.environ, HARNESS_FACE=target, PYTHONPATH=str(REPO))
        proc = subprocess.run(
            [sys.executable, "-c", code + "print(json.dumps(answers))"],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        found[target] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def builds(run: dict, kernel: str, target: str, shape: dict[str, int] | None = None) -> list:
    return [r for r in _builds(run, kernel, target) if shape is None or r["shape"] == shape]


def test_fla_builds_each_vendors_own_autotune_list_for_every_shape(run: dict, own_answers: dict) -> None:
    for target in ("h100", "mi300x"):
        own = own_answers[target]["fla"]
        assert own["amd"] == (target == "mi300x") and own["hopper"] == (target == "h100")  # asked at import
        for shape in ({"T": 4096, "D": 4096}, {"T": 2048, "D": 8192}):
            mine = builds(run, "fla_l2norm_vendor", target, shape)
            assert sorted(json.dumps(r["config"], sort_keys=True) for r in mine) == own["configs"], (target, shape)
            assert all(r["captured"]["face"] == target and r["captured"]["tuned"] for r in mine)
            assert all(r["status"] == "ok" and r["fits"] for r in mine)  # no 32-warp launch judged on AMD
    widest = {t: max(r["config"]["num_warps"] for r in builds(run, "fla_l2norm_vendor", t)) for t in ("h100", "mi300x")}
    assert widest == {"h100": 32, "mi300x": 16}
    answers = builds(run, "fla_l2norm_vendor", "mi300x")[0]["captured"]["face_answers"]
    assert answers["device_name"] == "AMD Instinct MI300X" and answers["gcnArchName"].startswith("gfx942")


def test_conch_launches_its_vendors_fp8_and_each_of_two_launches_is_a_build(run: dict, own_answers: dict) -> None:
    pointer = {"torch.float8_e4m3fn": "*fp8e4nv", "torch.float8_e4m3fnuz": "*fp8e4b8"}
    for target in ("h100", "mi300x"):
        own = own_answers[target]["conch"]
        for launch, width in (("conch_qk.launch1", 4096), ("conch_qk.launch2", 1024)):
            (r,) = builds(run, launch, target)
            spec = r["specialisation"]
            assert spec["cxpr_is_rocm"]["value"] is own["amd"] and spec["output_ptr"]["type"] == pointer[own["fp8"]]
            assert spec["cxpr_hidden_size_padded"]["value"] == width  # Q's launch, then K's
            assert (r["captured"]["launch"], r["captured"]["of"]) == (int(launch[-1]), 2) and r["status"] == "ok"


def test_torchao_heuristic_is_evaluated_by_triton_per_config_and_shape(run: dict) -> None:
    from torchao.prototype.quantized_training.int8_mm import _scaled_int8_mm_kernel

    heuristic = _scaled_int8_mm_kernel.fn.values["EVEN_K"]  # autotune over heuristics: the library's own lambda
    from harness.authoring.decorated import config_dict

    listed = {json.dumps(config_dict(c), sort_keys=True) for c in _scaled_int8_mm_kernel.configs}
    for target in ("h100", "mi300x"):
        for shape in ({"M": 512, "N": 1024, "K": 1088},):
            mine = builds(run, "torchao_int8_mm_k1088", target, shape)
            assert {json.dumps(r["config"], sort_keys=True) for r in mine} == listed
            for r in mine:
                assert r["specialisation"]["EVEN_K"]["value"] == heuristic({"K": shape["K"], **r["config"]})
    odd = builds(run, "torchao_int8_mm_k1088", "h100", {"M": 512, "N": 1024, "K": 1088})
    assert {r["specialisation"]["EVEN_K"]["value"] for r in odd} == {True, False}  # 1088 = 17 x 64, not x 128
