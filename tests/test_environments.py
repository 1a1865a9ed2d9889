"""Compile environments: real compiles under Triton codegen knobs, 'at risk' verdicts, identity, validation."""

from __future__ import annotations

import json
from pathlib import Path

import triton
from helpers import call_cli, run_cli, write_matrix

from harness.analysis import verdicts
from harness.execution.pool import Workers
from harness.intake import loader
from harness.matrix.cases import Case, compile_job
from harness.matrix.configs import ConfigEntry
from harness.model import targets
from harness.model.environments import DEFAULT_ENV, Environment, worker_env
from harness.model.ids import config_id
from harness.model.records import Record

ASYNC = Environment("async-copy", (("TRITON_HIP_USE_ASYNC_COPY", "1"),))
# A pipelined GEMM tile that needs exactly MI300X's 64 KiB by default and more with async copy (triton 3.6).
GEMM = {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
SHAPE = (("M", 1000), ("N", 1024), ("K", 1000))


def _compile_under(env: Environment, out: Path, workers: Workers) -> Record:
    ref = loader.resolve("matmul", None)
    entry = ConfigEntry(tuple(GEMM.items()), "nvidia")
    case = Case("matmul", ref, "fp16", (SHAPE,), "mi300x", "x", (entry,), 300.0, 0, env)
    result = workers.map("compile", [compile_job(case, entry, str(out))], 300.0, 1, env)[0].to_json()
    assert result["status"] == "ok", result
    fields = {k: v for k, v in result.items() if k != "triton"}
    return Record.from_dict(
        {
            "kernel": "matmul",
            "dtype": "fp16",
            "shape": dict(SHAPE),
            "target": "mi300x",
            "arch": "gfx942",
            "vendor": "amd",
            "triton": "x",
            "config": GEMM,
            "config_id": config_id(GEMM),
            "meta": {},
            "origin": "nvidia",
            "mode": "compile",
            "environment": env.name,
            "env": env.as_dict(),
            **fields,
        }
    )


def test_async_copy_changes_lds_and_the_default_is_at_risk(tmp_path: Path) -> None:
    workers = Workers()
    try:
        default = _compile_under(DEFAULT_ENV, tmp_path, workers)
        async_copy = _compile_under(ASYNC, tmp_path, workers)
        assert workers.get("compile", DEFAULT_ENV).pid != workers.get("compile", ASYNC).pid  # no shared process
    finally:
        workers.close()
    assert default.resources.shared <= 65536 < async_copy.resources.shared
    assert default.fits and not async_copy.fits
    judged = verdicts.judge_target([default, async_copy])
    assert judged.verdict == "at risk" and verdicts.outcome(async_copy) == "exceeds"
    assert any("async-copy" in why and str(async_copy.resources.shared) in why for why in judged.reasons)
    # never the same artifacts directory
    assert default.artifacts["amdgcn"].path != async_copy.artifacts["amdgcn"].path
    assert default.key() != async_copy.key()


def test_worker_environment_is_explicit() -> None:
    base = {"TRITON_HIP_USE_ASYNC_COPY": "1", "TRITON_PTXAS_PATH": "/opt/ptxas", "TRITON_CACHE_DIR": "/c", "X": "1"}
    default = worker_env(base, DEFAULT_ENV)
    assert "TRITON_HIP_USE_ASYNC_COPY" not in default  # the default is Triton's defaults, not the caller's shell
    assert default["TRITON_PTXAS_PATH"] == "/opt/ptxas" and default["TRITON_CACHE_DIR"] == "/c"
    swept = worker_env(base, ASYNC)
    assert swept["TRITON_HIP_USE_ASYNC_COPY"] == "1" and swept["TRITON_CACHE_DIR"].startswith("/c/harness-env-")


def test_catalogue_environments_are_opt_in_by_name_and_ids_show_the_environment(tmp_path: Path) -> None:
    assert [e.name for e in targets.get("mi300x").named_environments] == ["async-copy"]
    body = """\
name: envs
targets: [mi300x]
kernels:
  vector_add:
    dtypes: [fp32]
    shapes: [{N: 4096}]
    configs: [{BLOCK: 1024, num_warps: 4}]
    interpret: false
"""
    plain = write_matrix(tmp_path / "plain.yaml", body)  # asked for mi300x: built as Triton builds it, once
    listed = call_cli("list", str(plain))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert listed.stdout.splitlines() == [f"vector_add[fp32-N4096-mi300x-triton{triton.__version__}]"]
    assert "1 case(s)" in listed.stderr
    matrix = write_matrix(tmp_path / "m.yaml", body + "environments:\n  mi300x: [default, async-copy]\n")
    out = tmp_path / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--", "-rA")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "vector_add[fp32-N4096-mi300x@async-copy-triton" in proc.stdout
    records = json.loads((out / "results.json").read_text())["records"]
    assert sorted(r["environment"] for r in records) == ["async-copy", "default"]
    assert {r["env"].get("TRITON_HIP_USE_ASYNC_COPY") for r in records} == {None, "1"}
    paths = {r["artifacts"]["amdgcn"]["path"] for r in records}
    assert len(paths) == 2 and any("mi300x.async-copy" in p for p in paths)


BAD_ENV = [
    ("unknown_variable", "mi300x: [{name: x, env: {TRITON_HIP_USE_ASYNC_COPPY: '1'}}]", "did you mean"),
    ("default_with_variables", "mi300x: [{name: default, env: {TRITON_HIP_USE_ASYNC_COPY: '1'}}]", "sets no variables"),
    ("target_not_in_matrix", "h100: [{name: default, env: {}}]", "not a target of this matrix"),
    ("unknown_name", "mi300x: [default, async-cpy]", "no environment named 'async-cpy' (did you mean 'async-copy'?)"),
    ("duplicate_name", "mi300x: [{name: a, env: {}}, {name: a, env: {AMDGCN_USE_BUFFER_OPS: '0'}}]", "duplicate"),
]


def test_bad_environments_are_reported_with_their_line(tmp_path: Path) -> None:
    for name, text, fragment in BAD_ENV:
        path = write_matrix(
            tmp_path / f"{name}.yaml",
            f"""\
name: t
targets: [mi300x]
environments:
  {text}
kernels:
  vector_add:
    dtypes: [fp32]
    shapes: [{{N: 16}}]
""",
        )
        proc = call_cli("validate", str(path))
        assert proc.returncode == 2, (name, proc.stdout)
        assert f"{path}:4: " in proc.stdout and fragment in proc.stdout, (name, proc.stdout)
        assert "Traceback" not in proc.stdout + proc.stderr


def test_a_kernels_own_environments_override_the_matrixs_for_that_kernel_only(tmp_path: Path) -> None:
    """``environments`` under a kernel sweeps that kernel alone (the default matrix sweeps only its GEMM under async
    copy); validate counts the columns and builds the run makes, and a bad entry there is its own file:line."""
    good = write_matrix(
        tmp_path / "good.yaml",
        """\
name: t
targets: [h100, mi300x]
kernels:
  vector_add:
    dtypes: [fp32]
    shapes: [{N: 16}]
    configs: [{BLOCK: 256, num_warps: 4}]
  matmul:
    environments: {mi300x: [default, async-copy]}
    dtypes: [fp16]
    shapes: [{M: 64, N: 64, K: 64}]
    configs: [{BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, GROUP_M: 8, num_warps: 4, num_stages: 2}]
""",
    )
    proc = call_cli("validate", str(good))
    # h100 and mi300x for both kernels, mi300x@async-copy for matmul only: 3 columns, 5 builds
    assert proc.returncode == 0 and "in 3 target columns" in proc.stdout and ", 5 compiles" in proc.stdout, proc.stdout
    listed = call_cli("list", str(good)).stdout
    assert "async-copy" in listed and not any("vector_add" in ln and "async-copy" in ln for ln in listed.splitlines())
    bad = write_matrix(
        tmp_path / "bad.yaml",
        """\
name: t
targets: [mi300x]
kernels:
  vector_add:
    dtypes: [fp32]
    shapes: [{N: 16}]
    environments:
      mi300x: [default, async-cpoy]
""",
    )
    proc = call_cli("validate", str(bad))
    assert proc.returncode == 2 and f"{bad}:8: " in proc.stdout and "async-cpoy" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_compile_that_fails_only_under_a_knob_is_recorded(tmp_path: Path) -> None:
    """Found by this harness: triton 3.6 fails (PassManager::run) on 4-stage gfx942 GEMMs with async copy
    when the sizes are multiples of 16. If a Triton release fixes it, this test says so."""
    import triton

    if triton.__version__ != "3.6.0":
        import pytest

        pytest.skip("pins a triton 3.6.0 behaviour")
    cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4}
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: knob-failure
targets: [mi300x]
environments: {{mi300x: [default, async-copy]}}
kernels:
  matmul:
    dtypes: [fp16]
    shapes: [{{M: 2048, N: 2048, K: 2048}}]
    configs: [{json.dumps(cfg)}]
    interpret: false
""",
    )
    out = tmp_path / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0")
    assert proc.returncode == 0  # only under the opt-in knob: a finding (at risk), not a failure of the run
    records = {r["environment"]: r for r in json.loads((out / "results.json").read_text())["records"]}
    assert records["async-copy"]["status"] == "error" and "PassManager" in records["async-copy"]["error"]
    assert records["default"]["status"] == "ok"
    assert "mi300x@async-copy" in (out / "report.md").read_text().split("## Failures")[1]
    # the default build exceeds the LDS limit: that is the verdict, the knob's compile error stands beside it
    doc = json.loads((out / "results.json").read_text())
    deciding = next(e for e in doc["verdicts"] if e["deciding"])
    assert deciding["verdict"] == "exceeds" and "compile error: RuntimeError: PassManager" in deciding["beside"][0]
    assert doc["portability"][0]["verdict"] == "exceeds a limit"


def test_a_compile_error_under_another_environment_is_a_risk() -> None:
    ok = Record.from_dict(
        {
            "kernel": "k",
            "dtype": "fp16",
            "shape": {"N": 1},
            "target": "mi300x",
            "arch": "gfx942",
            "vendor": "amd",
            "triton": "x",
            "config": {"B": 1},
            "config_id": "B1",
            "meta": {},
            "origin": "amd",
            "mode": "compile",
            "status": "ok",
            "resources": {"shared": 1},
        }
    )
    bad = Record.from_dict(
        {
            **ok.to_dict(),
            "status": "error",
            "error": "PassManager::run failed",
            "environment": "async-copy",
            "env": {"TRITON_HIP_USE_ASYNC_COPY": "1"},
        }
    )
    judged = verdicts.judge_target([ok, bad])
    assert judged.verdict == "at risk" and "compile error: PassManager" in judged.reasons[0]
