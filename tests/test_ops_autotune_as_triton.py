"""A captured op's autotuner runs as Triton runs it, under each target's virtual device: its ``early_config_prune``
is called by Triton's own ``Autotuner.prune_configs`` with the launch's keyword arguments, reads the device it
believes it runs on, and *rewrites* the configs; what it returns is the space built. And ``launches_from`` asks
the cross-vendor question on purpose: every target builds one target's launches, and the report says so.

The library is written here (no public one outside those kept for independent checks rewrites its configs from
a launch keyword: gptq-triton's pruner rewrites from M/N/K but its package imports transformers at import); the
autotuner, the pruner call and the candidates' "benchmark" are Triton's own code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cli, write_matrix

pytest.importorskip("torch")

LIBRARY = '''
import torch
import triton
import triton.language as tl

SEEN = []


def prune(configs, nargs, **kwargs):
    """Keeps the tiles that fit the device's shared memory at the stages it can afford, rewritten: the block
    from the launch's keyword CHUNK, the stage count lowered until the estimate fits."""
    from triton.runtime import driver

    smem = driver.active.utils.get_device_properties(torch.cuda.current_device())["max_shared_mem"]
    chunk = kwargs["CHUNK"]
    out = []
    for c in configs:
        block = c.kwargs["BLOCK"] * chunk
        stages = c.num_stages
        while stages > 1 and block * 4 * stages > smem:
            stages -= 1
        out.append(triton.Config({"BLOCK": block, "STAGES": stages}, num_warps=c.num_warps, num_stages=stages))
    return out


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=4, num_stages=6) for b in (1024, 4096)],
    key=["n"],
    prune_configs_by={"early_config_prune": prune},
)
@triton.jit
def scale(x_ptr, y_ptr, n, CHUNK: tl.constexpr, BLOCK: tl.constexpr, STAGES: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * STAGES, mask=offs < n)


def scale_op(x):
    y = torch.empty_like(x)
    n = x.numel()
    scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, CHUNK=4)
    return y


def inputs(shape, dtype, device, generator):
    from harness.torchutil import randn

    return (randn((shape["N"],), dtype, device, generator),)
'''


def _builds(out: Path) -> dict[tuple[str, str], list[dict]]:
    records = json.loads((out / "results.json").read_text())["records"]
    got: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        if r["mode"] == "compile":
            got.setdefault((r["kernel"], r["target"]), []).append(r)
    return got


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tuned")
    (root / "lib.py").write_text(LIBRARY)
    out = {}
    for name, extra in (("own", ""), ("cross", "    launches_from: h100\n")):
        matrix = write_matrix(
            root / f"{name}.yaml",
            "name: tuned\ntargets: [h100, mi300x]\nenvironments:\n  mi300x: [{name: default, env: {}}]\n"
            "kernels:\n  scale:\n    op: lib.py:scale_op\n    inputs: lib.py:inputs\n"
            f"{extra}    dtypes: [fp32]\n    shapes: [{{N: 65536}}]\n",
        )
        out[name] = root / name
        proc = run_cli("run", str(matrix), "--out", str(out[name]), "-n", "0")
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        (root / f"{name}.stdout").write_text(proc.stdout)
    return out


def test_the_pruner_reads_the_launch_keywords_and_the_face_and_its_rewritten_configs_are_built(
    runs: dict[str, Path],
) -> None:
    got = _builds(runs["own"])
    for target, smem in (("h100", 232448), ("mi300x", 65536)):
        configs = sorted(json.dumps(r["config"], sort_keys=True) for r in got[("scale", target)])
        want = []
        for block in (1024 * 4, 4096 * 4):  # the pruner's own rule, here as the test's expectation of the output
            stages = 6
            while stages > 1 and block * 4 * stages > smem:
                stages -= 1
            want.append(
                json.dumps({"BLOCK": block, "STAGES": stages, "num_stages": stages, "num_warps": 4}, sort_keys=True)
            )
        assert configs == sorted(want), target
        for r in got[("scale", target)]:
            assert r["status"] == "ok" and r["specialisation"]["CHUNK"]["value"] == 4  # the op's keyword, fixed
            assert r["specialisation"]["STAGES"]["value"] == r["config"]["STAGES"]  # the rewritten constexpr
    stdout = (runs["own"].parent / "own.stdout").read_text()
    assert "scale fp32 N65536:" in stdout and "the library adapts" in stdout


def test_launches_from_builds_one_targets_launches_everywhere_and_says_so(runs: dict[str, Path]) -> None:
    own, cross = _builds(runs["own"]), _builds(runs["cross"])
    h100 = sorted(json.dumps(r["config"], sort_keys=True) for r in own[("scale", "h100")])
    assert sorted(json.dumps(r["config"], sort_keys=True) for r in cross[("scale", "mi300x")]) == h100
    assert all(r["captured"]["face"] == "h100" for r in cross[("scale", "mi300x")])
    report = (runs["cross"] / "report.md").read_text()
    assert "h100's launches built for every target (launches_from)" in report
