"""On a real GPU: correctness at full size, failures per config, fault isolation, tuning, tables.

Run on a GPU host with: ``python -m pytest tests/gpu -q`` (skipped without a GPU).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from helpers import DATA, run_cli, write_matrix  # noqa: E402

from harness.device.detection import local_gpus, pick_device, pinned_env  # noqa: E402
from harness.execution.pool import Worker  # noqa: E402
from harness.intake import loader  # noqa: E402
from harness.model.jobs import BaselinesJob, GpuConfigJob, GpuJob, OnDevice, SustainedJob  # noqa: E402
from harness.model.runtime import GpuSlot  # noqa: E402

FAULTY = f"{DATA / 'faulty_kernel.py'}:SPEC"


def _local_target(gpu: GpuSlot) -> str:
    """The catalogue target this GPU is (by model); a GPU the catalogue does not know skips the test."""
    from harness.device.detection import match
    from harness.model.targets import catalogue

    found = [t.name for t in catalogue().values() if match(t, gpu)[0]]
    if not found:
        pytest.skip(f"{gpu.name} ({gpu.arch}) is no model of the catalogue: map it with --device-as")
    return found[0]


@pytest.fixture()
def gpu_worker() -> Worker:
    gpu = pick_device(None, local_gpus())
    env = pinned_env(dict(os.environ, PYTHONPATH=str(REPO)), gpu)
    worker = Worker("gpu", env)
    yield worker
    worker.close()


def _send(worker: Worker, job: GpuJob, timeout: float) -> dict:
    """The worker's typed reply to ``job``, as the wire carried it (the keys the results keep)."""
    return worker.send(job, timeout).to_json()


def _job(ref: str, shape: dict, config: dict, dtype: str = "fp32") -> GpuConfigJob:
    return GpuConfigJob(ref=ref, dtype=dtype, shape=shape, config=config, seed=1)


def _case_of(job: GpuConfigJob) -> dict:
    return {f.name: getattr(job, f.name) for f in dataclasses.fields(OnDevice)}


def test_device_matches_the_catalogue_arch(gpu_worker: Worker) -> None:
    gpu = pick_device(None, local_gpus())
    out = _send(
        gpu_worker, BaselinesJob(ref=loader.resolve("vector_add", None), dtype="fp32", shape={"N": 1 << 20}), 600
    )
    assert out["status"] == "ok", out
    assert out["device"]["arch"] == gpu.arch and out["copy_tbps"] > 0.5


def test_full_size_check_and_timing(gpu_worker: Worker) -> None:
    ref = loader.resolve("matmul", None)
    cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3}
    out = _send(gpu_worker, _job(ref, {"M": 2048, "N": 2048, "K": 2048}, cfg, "fp16"), 600)
    assert out["status"] == "ok", out
    timing = out["timing"]
    assert timing["reps"] == len(timing["samples_us"]) >= 10
    assert timing["p20_us"] <= timing["median_us"] <= timing["p80_us"]
    assert out["tflops"] > 10


def test_unwritten_output_fails_and_nan_never_passes(gpu_worker: Worker) -> None:
    out = _send(gpu_worker, _job(FAULTY, {"N": 4096}, {"MODE": 0, "BLOCK": 1024}), 600)
    assert out["status"] == "mismatch" and out["correctness"]["nonfinite"] == 2048


def test_out_of_resources_at_launch_is_that_configs_failure(gpu_worker: Worker) -> None:
    ref = loader.resolve("matmul", None)
    huge = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 8, "num_stages": 4}
    out = _send(gpu_worker, _job(ref, {"M": 1024, "N": 1024, "K": 1024}, huge, "fp16"), 600)
    assert out["status"] == "launch_error" and "shared" in out["error"].lower()


def test_a_fault_costs_only_its_own_request(gpu_worker: Worker) -> None:
    bad = _send(gpu_worker, _job(FAULTY, {"N": 4096}, {"MODE": 1, "BLOCK": 1024}), 600)
    assert bad["status"] in ("fault", "crash"), bad
    good = _send(gpu_worker, _job(FAULTY, {"N": 4096}, {"MODE": 2, "BLOCK": 1024}), 600)
    assert good["status"] == "ok", good
    assert gpu_worker.started == 2


def test_run_tunes_times_and_prices_portability(tmp_path: Path) -> None:
    gpu = pick_device(None, local_gpus())
    target = _local_target(gpu)
    other = "mi300x" if target.startswith(("h", "a", "b")) else "h100"
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: gpu-e2e
targets: [{target}, {other}]
environments:  # the GPU path is under test here, not the compile-environment sweep
  {other}: [{{name: default, env: {{}}}}]
kernels:
  matmul:
    dtypes: [fp16]
    shapes: [{{M: 2048, N: 2048, K: 2048}}]
    interpret: false
  softmax:
    dtypes: [bf16]
    shapes: [{{M: 4096, N: 4096}}]
    interpret: false
""",
    )
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    results = []
    for label in ("first", "second"):
        out = tmp_path / label
        proc = run_cli("run", str(matrix), "--out", str(out), "-n", "0", env=env)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        assert "on the device" in proc.stdout
        results.append(json.loads((out / "results.json").read_text())["records"])
    tunes = [r for r in results[0] if r["mode"] == "tune"]
    assert {r["kernel"] for r in tunes} == {"matmul", "softmax"}
    for t in tunes:
        rt = t["runtime"]
        assert t["status"] == "ok" and rt["winner_source"] == "tuned"
        assert rt["baselines"] and all(b["status"] == "ok" for b in rt["baselines"].values())
        assert other in rt["portability"]
    launched = [r for r in results[0] if r["mode"] == "compile" and r["target"] == target]
    assert all(r["runtime"]["status"] in ("ok", "not_launched") for r in launched)
    assert any(r["runtime"]["status"] == "ok" and r["runtime"]["correctness"]["status"] == "ok" for r in launched)
    second = [r for r in results[1] if r["mode"] == "tune"]
    assert all(r["runtime"]["winner_source"] == "cache" for r in second)
    for t in tunes + second:  # the winner's figure is sustained, timed in interleaved rounds with its baseline
        rt = t["runtime"]
        assert rt["timing_method"] == "sustained" and rt["timing"]["graph"] is True, rt["timing"]
        assert rt["isolated"]["method"] == "isolated"
        first = next(iter(rt["baselines"].values()))
        assert len(first["speedup_rounds"]) == 5 and first["speedup_method"].startswith("sustained")
    # clean samples: no stored sample set starts with a slow sample
    for r in results[0] + results[1]:
        for key in ("timing", "sustained"):
            t = (r.get("runtime") or {}).get(key)
            if isinstance(t, dict) and t.get("samples_us"):
                assert t["samples_us"][0] <= 1.5 * t["median_us"], (r["kernel"], r["config_id"], key)


def test_launch_parity_the_static_binary_is_the_one_that_launches(tmp_path: Path) -> None:
    """Every config the GPU phase launches ran the very cubin / hsaco the static phase recorded (sha256).

    The launched binary is read from Triton's JIT kernel cache right after the launch; a
    different specialisation (signature, attributes, options) would give a different binary.
    Empty Triton and harness caches: nothing is reused from an earlier build.
    """
    gpu = pick_device(None, local_gpus())
    target = _local_target(gpu)
    out = tmp_path / "run"
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache"), "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    proc = run_cli(
        "run", str(REPO / "matrices" / "smoke.yaml"), "--targets", target, "--out", str(out), "-n", "0", env=env
    )
    records = json.loads((out / "results.json").read_text())["records"]
    launched = [r for r in records if r["mode"] == "compile" and (r.get("runtime") or {}).get("status") == "ok"]
    smoke = yaml.safe_load((REPO / "matrices" / "smoke.yaml").read_text())
    written = {r["kernel"] for r in launched if not (r.get("inductor") or {}).get("entry")}
    assert written == set(smoke["kernels"]), proc.stdout[-3000:]
    # the compiled entry's kernels launched too (its Inductor kernels, each a case)
    assert {(r.get("inductor") or {}).get("entry") for r in launched} - {None} == set(smoke.get("compiled") or {})
    parity = {(r["kernel"], r["shape"].__repr__(), r["config_id"]): r["runtime"].get("launch_parity") for r in launched}
    assert all(p == "identical" for p in parity.values()), {k: p for k, p in parity.items() if p != "identical"}


GPU_FAULTS = f"{DATA / 'gpu_faults_kernel.py'}:SPEC"


def test_gpu_faults_in_a_whole_run_cost_only_their_own_case(tmp_path: Path) -> None:
    """A whole ``harness run``: an illegal address, NaN output, a grid over CUDA's limit and a GPU hang,
    each in its own case, run between healthy cases in one process (``-n 0``). Each fault is its own
    case's finding; the healthy cases after it (same kernel, and vector_add) are checked and timed."""
    gpu = pick_device(None, local_gpus())
    target = _local_target(gpu)
    matrix = write_matrix(
        tmp_path / "faults.yaml",
        f"""\
name: gpu-faults
targets: [{target}]
kernels:
  gpu_faults:
    source: {GPU_FAULTS}
    dtypes: [fp32]
    interpret: false
    timeout_s: 40
    shapes:
      - {{N: 65536, FAULT: 1}}
      - {{N: 65536, FAULT: 2}}
      - {{N: 65537, FAULT: 1}}
      - {{N: 65536, FAULT: 3}}
      - {{N: 65536, FAULT: 4}}
      - {{N: 65536, FAULT: 5}}
      - {{N: 65538, FAULT: 1}}
  vector_add:
    dtypes: [fp32]
    interpret: false
    shapes: [{{N: 1048576}}]
""",
    )
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        str(matrix),
        "--out",
        str(out),
        "-n",
        "0",
        env={"HARNESS_CACHE_DIR": str(tmp_path / "cache")},
        timeout=420,
    )
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-4000:]  # 1: some case failed, nothing else
    records = json.loads((out / "results.json").read_text())["records"]
    # one build per case: a config that is another's binary (same sha256 and launch) is never launched itself
    compiled = {
        (r["kernel"], r["shape"].get("FAULT"), r["shape"]["N"]): r
        for r in records
        if r["mode"] == "compile" and not r["duplicate_of"]
    }
    tuned = {(r["kernel"], r["shape"].get("FAULT"), r["shape"]["N"]): r for r in records if r["mode"] == "tune"}
    assert len(compiled) == len(tuned) == 8, sorted(compiled)  # every case kept both its records
    assert all(r["status"] == "ok" for r in compiled.values())  # every fault is a runtime one, or a flagged limit
    # FAULT 4's grid has 2^17 blocks on y, over CUDA's 65,535: the static launch limits flag it, so it is never
    # launched (the driver refused it when it was); every other case fits
    assert [k for k, r in compiled.items() if not r["fits"]] == [("gpu_faults", 4, 65536)]
    assert any(f["resource"] == "grid_y" for f in compiled[("gpu_faults", 4, 65536)]["flags"])

    def runtime(fault: int, n: int = 65536) -> dict:
        return compiled[("gpu_faults", fault, n)]["runtime"]

    healthy = [
        runtime(1, 65536),
        runtime(1, 65537),
        runtime(1, 65538),
        compiled[("vector_add", None, 1048576)]["runtime"],
    ]
    for rt in healthy:
        assert rt["status"] == "ok" and rt["correctness"]["status"] == "ok" and rt["timing"]["median_us"] > 0, rt
    assert runtime(2)["status"] in ("fault", "crash") and "illegal" in runtime(2)["error"].lower(), runtime(2)
    assert runtime(3)["status"] == "mismatch" and runtime(3)["correctness"]["nonfinite"] == 65536, runtime(3)
    assert (runtime(4) or {}).get("status") != "ok", runtime(4)  # flagged above: not launched
    assert runtime(5)["status"] == "timeout", runtime(5)
    for key, rec in tuned.items():
        assert rec["status"] == ("ok" if key[1] in (None, 1) else "error"), (key, rec["status"], rec.get("error"))
    report = (out / "report.md").read_text()
    assert "illegal" in report.lower() and "INCOMPLETE" not in report


def test_several_outputs_and_an_in_place_kernel_on_the_device(tmp_path: Path) -> None:
    """rmsnorm (two outputs, poisoned each) and cross_entropy (gradient over the logits) at real sizes: every
    config of the space is checked on the same inputs in turn, which holds only if the logits are restored
    before each check and each timed sample; the baselines return the same structures and are compared."""
    gpu = pick_device(None, local_gpus())
    target = _local_target(gpu)
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: outputs-inplace
targets: [{target}]
kernels:
  rmsnorm:
    dtypes: [bf16]
    shapes: [{{M: 16384, N: 4096, affine: true}}]
    interpret: false
  cross_entropy:
    dtypes: [bf16]
    shapes: [{{M: 4096, V: 128256}}]
    interpret: false
""",
    )
    out = tmp_path / "run"
    proc = run_cli(
        "run", str(matrix), "--out", str(out), "-n", "0", "--retune", env={"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    records = json.loads((out / "results.json").read_text())["records"]
    for kernel, outputs in (("rmsnorm", {"y", "rstd"}), ("cross_entropy", {"loss", "grad"})):
        launched = [
            r
            for r in records
            if r["kernel"] == kernel and r["mode"] == "compile" and r["runtime"]["status"] != "not_launched"
        ]
        assert len(launched) >= 3, kernel
        for r in launched:
            rt = r["runtime"]
            assert rt["status"] == "ok", (kernel, r["config_id"], rt.get("error"))
            if rt.get("stage") != "final":  # a final-stage record was checked at its screen
                assert set(rt["correctness"]["outputs"]) == outputs and rt["correctness"]["nonfinite"] == 0
        tune = next(r for r in records if r["kernel"] == kernel and r["mode"] == "tune")
        baselines = tune["runtime"]["baselines"]
        assert baselines and all(b["status"] == "ok" and b["matches_reference"] for b in baselines.values()), baselines


def test_tensor_descriptors_and_fp8_on_the_device(tmp_path: Path) -> None:
    """attention_desc runs its TensorDescriptor (TMA) path on sm_90 and moe_gemm its native fp8 format: every
    fitting config correct at full size, the launched binary the static one, baselines compared."""
    gpu = pick_device(None, local_gpus())
    target = _local_target(gpu)
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: desc-fp8
targets: [{target}]
kernels:
  attention_desc:
    dtypes: [fp16]
    shapes: [{{B: 4, H: 16, N: 4096, D: 64, causal: true}}]
    interpret: false
  moe_gemm:
    dtypes: [fp8]
    shapes: [{{T: 16384, E: 8, N: 4096, K: 4096, bias: true}}]
    interpret: false
""",
    )
    out = tmp_path / "run"
    proc = run_cli(
        "run", str(matrix), "--out", str(out), "-n", "0", "--retune", env={"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    records = json.loads((out / "results.json").read_text())["records"]
    for kernel in ("attention_desc", "moe_gemm"):
        launched = [
            r
            for r in records
            if r["kernel"] == kernel and r["mode"] == "compile" and r["runtime"]["status"] != "not_launched"
        ]
        assert launched, kernel
        for r in launched:
            assert r["runtime"]["status"] == "ok", (kernel, r["config_id"], r["runtime"].get("error"))
            assert r["runtime"].get("launch_parity") in ("identical", None), r["runtime"].get("launch_parity_detail")
        tune = next(r for r in records if r["kernel"] == kernel and r["mode"] == "tune")
        assert all(b["status"] == "ok" and b["matches_reference"] for b in tune["runtime"]["baselines"].values())
    if (gpu.arch or "").startswith("sm_"):
        desc = [r for r in records if r["kernel"] == "attention_desc" and r["mode"] == "compile"]
        assert all(r["specialisation"]["Q"]["type"].startswith("tensordesc<") for r in desc)
        fp8 = [r for r in records if r["kernel"] == "moe_gemm" and r["mode"] == "compile"]
        assert all(r["specialisation"]["a_ptr"]["type"] == "*fp8e4nv" for r in fp8)


def test_cases_run_only_on_their_own_model_unless_mapped(tmp_path: Path) -> None:
    """Two targets of the local GPU's architecture: the local model's cases run on it; the other model's stay
    static and say why; --device-as runs them too and records the mapping."""
    from harness.model.targets import catalogue

    gpu = pick_device(None, local_gpus())
    here = _local_target(gpu)
    twin = next((t.name for t in catalogue().values() if t.arch == gpu.arch and t.name != here), None)
    if twin is None:
        pytest.skip(f"the catalogue has no other model of {gpu.arch}")
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"""\
name: models
targets: [{here}, {twin}]
kernels:
  softmax:
    dtypes: [fp16]
    shapes: [{{M: 4096, N: 4096}}]
    interpret: false
""",
    )
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    plain = run_cli("run", str(matrix), "--out", str(tmp_path / "plain"), "-n", "0", env=env)
    assert plain.returncode == 0, plain.stdout[-3000:]
    records = json.loads((tmp_path / "plain" / "results.json").read_text())["records"]
    assert {r["target"] for r in records if r["mode"] == "tune"} == {here}
    static = [r for r in records if r["target"] == twin and r["mode"] == "compile"]
    assert static and all(
        r["runtime"]["status"] == "not_launched" and f"no {twin} here" in r["runtime"]["reason"] for r in static
    )
    mapped = run_cli("run", str(matrix), "--out", str(tmp_path / "mapped"), "-n", "0", "--device-as", twin, env=env)
    assert mapped.returncode == 0, mapped.stdout[-3000:]
    records = json.loads((tmp_path / "mapped" / "results.json").read_text())["records"]
    tunes = {r["target"]: r for r in records if r["mode"] == "tune"}
    assert set(tunes) == {here, twin} and f"--device-as {twin}" in tunes[twin]["runtime"]["device_as"]
    assert "device_as" not in tunes[here]["runtime"]


def test_sustained_timing_and_a_baseline_that_synchronises(gpu_worker: Worker) -> None:
    """Sustained: one graph of many launches, per-launch time, interleaved rounds; a baseline that reads a value
    back to the host inside its timed call is refused (torch's sync debug mode caught it)."""
    ref = f"{DATA / 'syncing_baseline_kernel.py'}:SPEC"
    job = _job(ref, {"N": 1 << 24}, {"BLOCK": 1024, "num_warps": 4})
    # as a case runs: the config is checked (loaded) before the baselines. The refused baseline cannot be captured
    # in a graph, so torch's profiler names its kernels, which imports Inductor: a config compiled only after that
    # would be refused as not the static binary (gpu_sustained's guard), not timed
    assert _send(gpu_worker, job, 600)["status"] == "ok"
    base = _send(gpu_worker, BaselinesJob(**_case_of(job)), 600)
    assert base["status"] == "ok", base
    assert base["baselines"]["clone"]["status"] == "ok"
    refused = base["baselines"]["clone after .item()"]
    assert refused["status"] == "error" and "synchronises with the host" in refused["error"], refused
    sustained = SustainedJob(**_case_of(job), configs={"B1024": {"BLOCK": 1024, "num_warps": 4}}, baselines=("clone",))
    out = _send(gpu_worker, sustained, 600)
    assert out["status"] == "ok", out
    kernel, clone = out["timings"]["config B1024"]["timing"], out["timings"]["baseline clone"]["timing"]
    for t in (kernel, clone):
        assert t["method"] == "sustained" and t["graph"] is True and t["launches_per_sample"] >= 2, t
        # after each switch between the two items, 100 ms of batches run untimed (SWITCH_MS); after the same item, one
        assert len(t["round_medians_us"]) == 5 and t["reps"] == 15 and t["warmup_discarded"] > 5
    # a copy of 64 MB each way: both at a few TB/s, within 2x of each other
    assert 0.5 < kernel["median_us"] / clone["median_us"] < 2.0
    iso = _send(gpu_worker, job, 600)["timing"]
    assert iso["method"] == "isolated" and iso["warmup_discarded"] == 2
    assert iso["samples_us"][0] <= 1.5 * iso["median_us"], iso["samples_us"][:5]
