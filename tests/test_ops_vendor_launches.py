"""Three PyPI libraries' ops captured per target under its virtual device: each target's records are the launches
that library makes on that vendor, checked against the library's own source of the choice, called in a child that
wears the same target's face (not against a rule of the harness's).

- fla-core asks Triton's driver for the vendor *at import* (``get_current_target``, then
  ``torch.cuda.get_device_capability`` / ``get_device_name`` when it finds CUDA) and builds its L2-norm autotune
  list from the answer: 32 warps on NVIDIA only. Two shapes.
- conch-triton-kernels picks its fp8 format (OCP e4m3 or MI300's "fnuz") and a constexpr (``cxpr_is_rocm``) at
  run time from ``torch.version.hip``; the op quantises Q and K, one kernel launched twice with other constexprs.
- torchao's int8 GEMM is autotune over heuristics: the heuristic (``EVEN_K``) is evaluated per config by Triton's
  own ``Heuristics.run``, so at K = 1088 the configs whose BLOCK_K divides it and those whose does not differ.

Which library does what is written in the docstring of ``tests/data/library/vendor_ops.yaml``'s entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA, run_cli

pytest.importorskip("fla", reason="fla-core is not installed (pip install fla-core einops)")
pytest.importorskip("conch", reason="conch-triton-kernels is not installed (pip install conch-triton-kernels)")
pytest.importorskip("torchao", reason="torchao is not installed (pip install torchao)")

MATRIX = DATA / "library" / "vendor_ops.yaml"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("vendor") / "run"
    proc = run_cli("run", str(MATRIX), "--out", str(out), "-n", "0", timeout=1500)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return [r for r in json.loads((out / "results.json").read_text())["records"] if r["mode"] == "compile"]


def as_on(target: str, code: str) -> Any:
    """What the library's own code answers in a fresh process wearing ``target``'s face (its last line, JSON)."""
    prelude = "import json\nfrom harness.matrix import face\nface.wear_from_env()\n"
    env = dict(os.environ, HARNESS_FACE=target, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def builds(records: list[dict[str, Any]], kernel: str, target: str, shape: dict[str, int] | None = None) -> list:
    return [
        r for r in records if r["kernel"] == kernel and r["target"] == target and (shape is None or r["shape"] == shape)
    ]


def test_fla_builds_each_vendors_own_autotune_list_for_every_shape(run: list[dict[str, Any]]) -> None:
    code = (
        "import fla.utils as u\nfrom fla.modules.norm.l2norm import l2norm_fwd_kernel_row as k\n"
        "from harness.authoring.decorated import config_dict  # a triton.Config as the harness writes a config\n"
        "print(json.dumps({'configs': sorted(json.dumps(config_dict(c), sort_keys=True) for c in k.configs),"
        " 'amd': u.IS_AMD, 'hopper': u.IS_NVIDIA_HOPPER}))"
    )
    for target in ("h100", "mi300x"):
        own = as_on(target, code)
        assert own["amd"] == (target == "mi300x") and own["hopper"] == (target == "h100")  # asked at import
        for shape in ({"T": 4096, "D": 4096}, {"T": 2048, "D": 8192}):
            mine = builds(run, "fla_l2norm", target, shape)
            assert sorted(json.dumps(r["config"], sort_keys=True) for r in mine) == own["configs"], (target, shape)
            assert all(r["captured"]["face"] == target and r["captured"]["tuned"] for r in mine)
            assert all(r["status"] == "ok" and r["fits"] for r in mine)  # no 32-warp launch judged on AMD
    widest = {t: max(r["config"]["num_warps"] for r in builds(run, "fla_l2norm", t)) for t in ("h100", "mi300x")}
    assert widest == {"h100": 32, "mi300x": 16}
    answers = builds(run, "fla_l2norm", "mi300x")[0]["captured"]["face_answers"]
    assert answers["device_name"] == "AMD Instinct MI300X" and answers["gcnArchName"].startswith("gfx942")


def test_conch_launches_its_vendors_fp8_and_each_of_two_launches_is_a_build(run: list[dict[str, Any]]) -> None:
    code = (
        "import torch\nfrom conch.platforms import detect_current_platform\n"
        "from conch.ops.quantization.fp8 import scaled_fp8_quant\nfrom harness.matrix.capture import launches\n"
        "x = torch.empty(4, 64, dtype=torch.float16, device='cuda')\n"
        "with launches():  # the format is the library's Python's choice, made before its launch\n"
        "    y, _ = scaled_fp8_quant(x, torch.ones(1, device='cuda'))\n"
        "print(json.dumps({'amd': detect_current_platform().is_amd(), 'fp8': str(y.dtype)}))"
    )
    pointer = {"torch.float8_e4m3fn": "*fp8e4nv", "torch.float8_e4m3fnuz": "*fp8e4b8"}
    for target in ("h100", "mi300x"):
        own = as_on(target, code)
        for launch, width in (("conch_qk.launch1", 4096), ("conch_qk.launch2", 1024)):
            (r,) = builds(run, launch, target)
            spec = r["specialisation"]
            assert spec["cxpr_is_rocm"]["value"] is own["amd"] and spec["output_ptr"]["type"] == pointer[own["fp8"]]
            assert spec["cxpr_hidden_size_padded"]["value"] == width  # Q's launch, then K's
            assert (r["captured"]["launch"], r["captured"]["of"]) == (int(launch[-1]), 2) and r["status"] == "ok"


def test_torchao_heuristic_is_evaluated_by_triton_per_config_and_shape(run: list[dict[str, Any]]) -> None:
    from torchao.prototype.quantized_training.int8_mm import _scaled_int8_mm_kernel

    heuristic = _scaled_int8_mm_kernel.fn.values["EVEN_K"]  # autotune over heuristics: the library's own lambda
    from harness.authoring.decorated import config_dict

    listed = {json.dumps(config_dict(c), sort_keys=True) for c in _scaled_int8_mm_kernel.configs}
    for target in ("h100", "mi300x"):
        for shape in ({"M": 512, "N": 1024, "K": 1088},):
            mine = builds(run, "torchao_int8_mm", target, shape)
            assert {json.dumps(r["config"], sort_keys=True) for r in mine} == listed
            for r in mine:
                assert r["specialisation"]["EVEN_K"]["value"] == heuristic({"K": shape["K"], **r["config"]})
    odd = builds(run, "torchao_int8_mm", "h100", {"M": 512, "N": 1024, "K": 1088})
    assert {r["specialisation"]["EVEN_K"]["value"] for r in odd} == {True, False}  # 1088 = 17 x 64, not x 128
