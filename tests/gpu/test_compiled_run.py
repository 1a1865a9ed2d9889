"""Compiled entries of a run matrix on this GPU (tests/data/compiled/run.yaml): every config Inductor lists for each
kernel, as captured under this GPU's virtual device, is checked against eager PyTorch and timed through the compiled
function with that kernel held to that config (harness.intake.inductor.inductor_spec); the binary it launched is the one the
build stage made with Inductor's options (launch parity, by sha256)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from helpers import DATA, run_cli


def _target() -> str:
    import torch

    return "h200" if "H200" in torch.cuda.get_device_name(0) else "h100"


def test_each_compiled_config_is_checked_and_timed_against_eager(tmp_path: Path) -> None:
    shutil.copy(DATA / "compiled" / "models.py", tmp_path / "models.py")
    # this GPU's model among the matrix's targets: an H200 host runs h200's cases (h100's only where mapped)
    matrix = (DATA / "compiled" / "run.yaml").read_text()
    assert "targets: [h100, mi300x]" in matrix
    (tmp_path / "run.yaml").write_text(matrix.replace("targets: [h100, mi300x]", f"targets: [{_target()}, mi300x]"))
    out = Path(os.environ.get("HARNESS_GPU_TEST_OUT", str(tmp_path))) / "compiled-run"
    proc = run_cli("run", str(tmp_path / "run.yaml"), "--targets", _target(), "--out", str(out), "-n", "1",
                   "--retune", timeout=1500)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    records = [json.loads(ln) for ln in (out / "records.jsonl").read_text().splitlines() if ln]
    builds = [r for r in records if r["mode"] == "compile"]
    tunes = [r for r in records if r["mode"] == "tune"]
    entries = {r["inductor"]["entry"] for r in builds}
    assert entries == {"act", "softmax", "sum", "mm", "mlp"}
    launched = [r for r in builds if r["runtime"] and r["runtime"]["status"] != "not_launched"]
    assert launched, "no config was launched"
    for r in launched:
        assert r["runtime"]["status"] == "ok", (r["kernel"], r["config"], r["runtime"].get("error"))
        assert r["runtime"]["correctness"]["status"] == "ok", (r["kernel"], r["config"])
    parity = [r["runtime"].get("launch_parity") for r in launched]
    assert parity.count("identical") == len(parity), sorted(set(map(str, parity)))
    assert len(tunes) == len({r["case_id"] for r in builds})
    for t in tunes:
        assert t["status"] == "ok", t.get("error")
        assert "eager" in (t["runtime"]["baselines"] or {}), t["kernel"]
        assert t["runtime"]["timing"]["median_us"] > 0  # the figures stay in the records (docs/performance.md)
    # the terminal says each function's speed-up over eager once per entry, shape and dtype, never per kernel
    (out / "terminal.txt").write_text(proc.stdout)
    device = proc.stdout.split("\non the device")[1].split("\nworst findings")[0]
    assert device.count(f"mlp T512xD1024 bf16 on {_target()}: compiled ") == 1, device
    assert "× eager" in device and "tuned on" not in device, device
    # and where one call's GPU time goes, split by event pairs around each of Inductor's launches: the kernels'
    # parts lie inside the call's span (measured apart, by its own pair); the activation is one Triton kernel and
    # nothing else, so it is nearly all of its call; the mm's GEMM is cuBLAS's, outside every Triton kernel
    for t in tunes:
        split = t["runtime"]["graph_time"]
        assert not split.get("error") and split["reps"] == 10, split
        assert 0 < sum(split["kernels"].values()) <= split["total_us"] * 1.01, split
        assert t["kernel"].split(".", 1)[1] in split["kernels"], (t["kernel"], split)
    act = [t["runtime"]["graph_time"] for t in tunes if t["kernel"].startswith("act.")]
    assert all(sum(g["kernels"].values()) >= 0.7 * g["total_us"] for g in act), act
    mm = [t["runtime"]["graph_time"] for t in tunes if t["kernel"].startswith("mm.")]
    assert all(sum(g["kernels"].values()) <= 0.5 * g["total_us"] for g in mm), mm
    assert device.count("GPU time of one call") == device.count(f" on {_target()}: compiled "), device


REGIONS = """\
name: op-regions
targets: [{target}]
kernels:
  ce:
    op: op_regions.py:cross_entropy
    inputs: op_regions.py:ce_inputs
    dtypes: [bf16]
    shapes: [{{M: 4096, V: 32000}}]
  block:
    op: op_regions.py:block
    inputs: op_regions.py:x_inputs
    dtypes: [bf16]
    shapes: [{{M: 2048, N: 4096}}]
  wrong:
    op: op_regions.py:wrong
    inputs: op_regions.py:x_inputs
    dtypes: [fp32]
    shapes: [{{M: 1024, N: 1024}}]
"""


def test_an_ops_compiled_regions_are_checked_and_timed_through_the_op(tmp_path: Path) -> None:
    """An op whose work is in torch.compile regions (tests/test_op_regions.py's): each region kernel's configs run
    through the op as shipped, its kernel held, against the op under force_eager; the region Inductor lowers
    wrongly fails there too."""
    for name in ("op_regions.py", "planted.py"):
        shutil.copy(DATA / "compiled" / name, tmp_path / name)
    (tmp_path / "m.yaml").write_text(REGIONS.format(target=_target()))
    out = Path(os.environ.get("HARNESS_GPU_TEST_OUT", str(tmp_path))) / "op-regions-run"
    proc = run_cli("run", str(tmp_path / "m.yaml"), "--out", str(out), "-n", "1", "--retune", timeout=1500)
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-4000:]  # the planted region fails
    records = [json.loads(ln) for ln in (out / "records.jsonl").read_text().splitlines() if ln]
    builds = [r for r in records if r["mode"] == "compile" and r["inductor"]]
    assert {r["kernel"].split(".")[0] for r in builds} == {"ce", "block", "wrong"}
    assert all(r["inductor"]["op"] for r in builds)
    for r in builds:
        rt = r["runtime"]
        wanted = "mismatch" if r["kernel"].startswith("wrong.") else "ok"  # a mismatch is the config's runtime status
        assert rt and rt["status"] == wanted, (r["kernel"], r["config"], rt)
        assert rt["correctness"]["status"] == wanted, (r["kernel"], r["config"], rt["correctness"])
        if wanted == "ok":
            assert rt.get("launch_parity") == "identical", (r["kernel"], rt.get("launch_parity"))
    tunes = [r for r in records if r["mode"] == "tune" and not r["kernel"].startswith("wrong.")]
    assert tunes and all(t["status"] == "ok" and t["runtime"]["timing"]["median_us"] > 0 for t in tunes), tunes
