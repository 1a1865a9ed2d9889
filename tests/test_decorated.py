"""Decorated kernels without a library: unwrapping both decorator orders, the autotuner's own pruning applied
on a CPU (and recorded), and a clear error for an ``fn`` that is no kernel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import triton
import triton.language as tl
from helpers import DATA, run_cli, write_matrix

from harness.authoring.decorated import unwrap


def test_both_decorator_orders_unwrap_to_the_jit_function() -> None:
    @triton.jit
    def k(x, n, B: tl.constexpr, E: tl.constexpr):
        pass

    configs = [triton.Config({"B": 64}, num_warps=2), triton.Config({"B": 128}, num_warps=8, num_stages=2)]
    heur = {"E": lambda args: args["n"] % args["B"] == 0}
    outer_tune = triton.autotune(configs=configs, key=["n"])(triton.heuristics(heur)(k))
    outer_heur = triton.heuristics(heur)(triton.autotune(configs=configs, key=["n"])(k))
    for decorated, layers in ((outer_tune, ("Autotuner", "Heuristics")), (outer_heur, ("Heuristics", "Autotuner"))):
        jit, found = unwrap(decorated)
        assert jit is k and found.layers == layers + ("JITFunction",)
        assert found.autotune_configs == (
            {"B": 64, "num_warps": 2, "num_stages": 3},
            {"B": 128, "num_warps": 8, "num_stages": 2},
        )
        assert found.autotune_key == ("n",) and [n for n, _ in found.heuristics] == ["E"]
    assert unwrap(k) == (k, None)
    with pytest.raises(TypeError, match="neither a triton.jit kernel"):
        unwrap(lambda x: x)


def test_the_autotuners_pruning_runs_on_a_cpu_and_is_recorded(tmp_path: Path) -> None:
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: pruned
targets: [h100]
kernels:
  pruned_copy: {{source: "{DATA / "decorated_kernel.py"}:SPEC", dtypes: [fp32], shapes: [{{N: 300}}, {{N: 5000}}]}}
""",
    )
    out = tmp_path / "run"
    proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0", "--static-only")
    assert proc.returncode == 0, proc.stdout[-2000:]
    records = [r for r in json.loads((out / "results.json").read_text())["records"] if r["mode"] == "compile"]
    by_shape = {}
    for r in records:
        by_shape.setdefault(r["shape"]["N"], []).append(r["config"]["BLOCK"])
    assert sorted(by_shape[300]) == [128] and sorted(by_shape[5000]) == [128, 512, 2048]
    notes = {r["shape"]["N"]: r["autotune"]["prune"] for r in records}
    assert notes == {300: "early_config_prune kept 1 of 3", 5000: "early_config_prune kept 3 of 3"}
