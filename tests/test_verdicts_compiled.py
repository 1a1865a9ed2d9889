"""Figures and verdicts over real compiles of the default GEMM and attention spaces on four targets.

One run of the CLI (no GPU) compiles matmul with both vendors' default config
spaces and flash attention at three of its configs (its full space is the default
matrix's, tests/test_smoke_matrix.py) for h100, a100, mi300x (with its
async-copy sweep) and mi355x; the tests read its ``results.json`` and artifacts. It takes Triton's cache of the
default matrix's cold run (``smoke_runs``, tests/conftest.py), whose GEMM is this one on h100 and mi300x: those
binaries are Triton's cache hits here, their figures derived again from them (the harness's own caches are this
run's, empty). AMD
figures are checked against the compiler's own lines in the AMDGCN
(``.vgpr_count``, ``; TotalNumVgprs``, ``; Occupancy``), not against our formula.
"""

from __future__ import annotations

import json
import re

import pytest
from helpers import run_cli, write_matrix

TARGETS = ("h100", "a100", "mi300x", "mi355x")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, smoke_runs: dict) -> dict:
    tmp = tmp_path_factory.mktemp("verdicts")
    matrix = write_matrix(
        tmp / "m.yaml",
        f"""\
name: verdicts
targets: [{", ".join(TARGETS)}]
environments: {{mi300x: [default, async-copy]}}
kernels:
  matmul:
    dtypes: [fp16]
    shapes: [{{M: 1024, N: 1024, K: 1024}}]
    interpret: false
  flash_attention:   # the config the AGPR test names, one that exceeds MI300X's LDS, one of the AMD space
    dtypes: [fp16]
    shapes: [{{B: 1, H: 2, N: 1024, D: 128, causal: false}}]
    configs:
      - {{BLOCK_M: 128, BLOCK_N: 64, num_stages: 4, num_warps: 4}}
      - {{BLOCK_M: 128, BLOCK_N: 128, num_warps: 8, num_stages: 3}}
      - {{BLOCK_M: 128, BLOCK_N: 64, num_warps: 4, num_stages: 1, waves_per_eu: 2, matrix_instr_nonkdim: 16}}
    interpret: false
""",
    )
    out = tmp / "run"
    env = {
        "TRITON_CACHE_DIR": smoke_runs["env"]["TRITON_CACHE_DIR"],
        "HARNESS_CACHE_DIR": str(tmp / "harness-cache"),
        "HARNESS_COMPILE_WORKERS": smoke_runs["env"]["HARNESS_COMPILE_WORKERS"],
    }
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--static-only", env=env)
    doc = json.loads((out / "results.json").read_text())
    return {"out": out, "doc": doc, "proc": proc}


def _compiler_line(text: str, name: str) -> int:
    m = re.search(rf"^\s*(?:- )?{re.escape(name)}\s*(\d+)", text, re.M)
    assert m, name
    return int(m.group(1))


def test_amd_registers_and_occupancy_are_the_compilers(run: dict) -> None:
    amd = [r for r in run["doc"]["records"] if r["vendor"] == "amd" and r["status"] == "ok"]
    assert len(amd) > 30
    with_agprs = []
    for r in amd:
        text = (run["out"] / r["artifacts"]["amdgcn"]["path"]).read_text()
        res = r["resources"]
        assert res["registers"] == _compiler_line(text, ".vgpr_count:") == _compiler_line(text, "; TotalNumVgprs:")
        waves, warps = _compiler_line(text, "; Occupancy:"), res["num_warps"]
        lds = 65536 if r["target"] == "mi300x" else 163840
        # whole workgroups: the compiler's waves per SIMD hold waves // ceil(warps / 4) workgroups of `warps`
        groups = (waves * 4) // warps if warps <= 4 else waves // -(-warps // 4)
        groups = min(groups, lds // res["shared"]) if res["shared"] else groups
        assert res["occupancy"] == (groups * warps / 4 if res["shared"] <= lds else 0)
        assert res["occupancy"] <= waves
        assert not any(f["resource"] == "registers" for f in r["flags"])
        if _compiler_line(text, ".agpr_count:") > 0:
            with_agprs.append(r)
    # the config the old double count called "768 registers > 512": flash attention 128x64, 4 warps, 4 stages, D=128
    fa = next(
        r
        for r in with_agprs
        if r["kernel"] == "flash_attention"
        and r["target"] == "mi300x"
        and r["environment"] == "default"
        and r["config_id"] == "M128_N64_s4_w4"
    )
    assert fa["resources"]["agpr"] > 0 and 256 < fa["resources"]["registers"] <= 512
    assert fa["fits"] is True and fa["resources"]["shared"] <= 65536 and fa["resources"]["occupancy"] == 1


def test_verdicts_are_in_results_json_with_default_builds_deciding(run: dict) -> None:
    doc = run["doc"]
    rows = {(p["kernel"], p["config_id"]): p for p in doc["portability"]}
    entries = {(e["kernel"], e["config_id"], e["column"]): e for e in doc["verdicts"]}
    compiles = [r for r in doc["records"] if r["mode"] == "compile"]
    assert len(entries) == len(compiles)  # one entry per case x config x target column
    # an AMD-space config that fits MI300X by default but not with async copy: fits, at risk
    risky = [p for p in rows.values() if "amd" in p["origin"].split("+") and p["targets"]["mi300x"] == "at risk"]
    assert risky
    for p in risky:
        assert "NVIDIA only" not in p["verdict"] and "at risk on mi300x" in p["verdict"]
        assert p["vendors"]["amd"]["fits"] in ("all", "some") and "mi300x" in p["vendors"]["amd"]["fitting"]
        async_copy = entries[(p["kernel"], p["config_id"], "mi300x@async-copy")]
        assert async_copy["verdict"] in ("exceeds", "failed") and not async_copy["deciding"]
    # a config that fits MI355X but not MI300X says so
    split = [
        p
        for p in rows.values()
        if p["targets"]["mi355x"] in ("fits", "at risk") and p["targets"]["mi300x"] == "exceeds"
    ]
    assert split
    for p in split:
        assert p["vendors"]["amd"] == {"fitting": ["mi355x"], "not": ["mi300x"], "incomplete": [], "fits": "some"}
        assert "AMD mi355x only" in p["verdict"] and p["asymmetric"]


def test_at_risk_only_from_real_compiles_under_another_environment(run: dict) -> None:
    doc = run["doc"]
    text = json.dumps(doc)
    assert "smem_bound" not in text and "analytic" not in text
    by_column = {(e["kernel"], e["config_id"], e["column"]): e for e in doc["verdicts"]}
    at_risk = [e for e in doc["verdicts"] if e["verdict"] == "at risk"]
    assert at_risk and all(e["target"] == "mi300x" for e in at_risk)  # the only target with a sweep
    for e in at_risk:
        other = by_column[(e["kernel"], e["config_id"], "mi300x@async-copy")]
        assert other["verdict"] in ("exceeds", "failed")
        assert all(reason.startswith("under async-copy") for reason in e["reasons"])
