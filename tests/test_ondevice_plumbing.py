"""The GPU phase's bookkeeping, with a fake device worker (the real one is exercised in tests/gpu)."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path

import pytest

from harness.analysis.findings import analyse
from harness.device.detection import pick_device, pinned_env
from harness.matrix.cases import Case
from harness.matrix.configs import ConfigEntry
from harness.model.jobs import GpuJob, SustainedJob, to_wire
from harness.model.payloads import LimitFlag
from harness.model.records import Record
from harness.model.replies import Reply
from harness.model.runtime import GpuSlot, Runtime
from harness.render import device_tables
from harness.tuning import gpu_phase, tune_record
from harness.tuning.launch_parity import launch_parity
from harness.tuning.winners import KnownWinner


def _sustained(us: float) -> dict:
    return {"method": "sustained", "median_us": us, "samples_us": [us] * 15, "round_medians_us": [us] * 5}


class FakeGpuWorker:
    """Answers like a GPU worker: config A takes 100 us, B 150 us, C fails its check."""

    US = {1: 100.0, 2: 150.0, 5: 130.0, 6: 80.0}

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict]] = []

    def send(self, job: GpuJob, timeout: float) -> Reply:
        """As the pool's worker sends it: the typed job, on the wire (what is recorded and answered), the answer read
        back as the job's reply class (a key the worker never writes fails here)."""
        return job.REPLY.from_wire(self.request(job.OP, to_wire(job), timeout))

    def request(self, op: str, job: dict, timeout: float) -> dict:
        self.requests.append((op, job))
        if op == "gpu_baselines":
            return {
                "status": "ok",
                "device": {"name": "fake"},
                "copy_tbps": 4.0,
                "baselines": {"lib": {"status": "ok", "timing": {"median_us": 120.0}}},
            }
        if op == "gpu_sustained":  # back to back: 5% slower than isolated, every round alike
            timings = {
                f"config {cid}": {"status": "ok", "timing": _sustained(1.05 * self.US[c["BLOCK"]])}
                for cid, c in job["configs"].items()
            }
            timings.update({f"baseline {n}": {"status": "ok", "timing": _sustained(126.0)} for n in job["baselines"]})
            return {"status": "ok", "timings": timings}
        us = {1: 100.0, 2: 150.0, 5: 130.0}.get(job["config"]["BLOCK"])
        if us is None:
            return {"status": "mismatch", "error": "wrong"}
        if job.get("stage") == "screen":
            us *= 0.99  # screening medians are a little off; decisions must rest on the full timings
        return {
            "status": "ok",
            "timing": {"median_us": us, "p20_us": us, "p80_us": us},
            "tflops": 1.0,
            "gbps": 1.0,
            "stage": job.get("stage", "full"),
        }


def _rec(block: int, origin: str, fits: bool = True) -> Record:
    cfg = {"BLOCK": block, "num_warps": 4}
    flags = [] if fits else [LimitFlag("shared", 9e5, 232448, "error")]
    return Record(
        kernel="k",
        dtype="fp16",
        shape={"N": 8},
        target="h200",
        arch="sm_90",
        vendor="nvidia",
        triton="3.6.0",
        config=cfg,
        config_id=f"BLOCK{block}",
        meta={"BLOCK": block},
        origin=origin,
        mode="compile",
        status="ok",
        fits=fits,
        flags=flags,
        kernel_hash="abc",
    )


def _case() -> Case:
    return Case("k", "ref:SPEC", "fp16", ((("N", 8),),), "h200", "3.6.0", (ConfigEntry((), "nvidia"),), 60.0, 0)


def test_winner_baselines_portability_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    built = [_rec(1, "nvidia"), _rec(2, "amd"), _rec(3, "amd"), _rec(4, "nvidia", fits=False), _rec(5, "nvidia")]
    worker = FakeGpuWorker()
    gpu = GpuSlot(index="0", uuid="GPU-x", arch="sm_90", name="fake")
    records, tune = gpu_phase.run_case(_case(), built, worker, gpu, ["mi300x", "h100"])
    assert all(r.runtime is None for r in built)  # the build stage's records are left as they were: new ones come back
    assert [r.config_id for r in records] == [r.config_id for r in built]
    screened = [job["config"]["BLOCK"] for op, job in worker.requests if job.get("stage") == "screen"]
    assert screened == [1, 2, 3, 5]  # the config over the limit is never launched
    # full timings: the fastest (5 is 30% slower: not a finalist) and the best of each vendor's space
    assert sorted(job["config"]["BLOCK"] for op, job in worker.requests if job.get("stage") == "final") == [1, 2]
    assert records[3].runtime.status == "not_launched" and "shared" in records[3].runtime.reason
    assert records[2].runtime.status == "mismatch"  # its own failure, not an infinity
    assert records[4].runtime.stage == "screen" and records[4].runtime.timing.median_us == 130 * 0.99
    assert records[0].runtime.stage == "final" and records[0].runtime.screen_timing.median_us == 99.0
    assert tune.status == "ok" and tune.config["BLOCK"] == 1 and tune.runtime.winner_source == "tuned"
    # the winner is chosen on its full isolated timing; its figure is the sustained one, timed with the baseline
    assert tune.runtime.median_us == 105.0 and tune.runtime.timing_method == "sustained"
    assert tune.runtime.isolated.median_us == 100.0 and tune.runtime.tflops is not None
    assert [op for op, _ in worker.requests][-2:] == ["gpu_baselines", "gpu_sustained"]
    assert sorted(worker.requests[-1][1]["configs"]) == ["BLOCK1", "BLOCK2"]  # the fully timed ones
    assert tune.runtime.baselines["lib"].speedup == pytest.approx(1.2)
    assert list(tune.runtime.baselines["lib"].speedup_rounds) == [pytest.approx(1.2)] * 5
    port = tune.runtime.portability
    assert port["mi300x"].slowdown == pytest.approx(1.5) and port["mi300x"].source.startswith("proxy")
    # no h100 winner is known (winners belong to a model, not to sm_90): this device's own best stands for it
    assert port["h100"].slowdown == pytest.approx(1.0) and port["h100"].source.startswith("same architecture")
    # every job carries the target's cache size, which sizes the flush and the input rotation
    assert {job["cache_bytes"] for _, job in worker.requests} == {60 << 20}
    # a later run reuses the cached winner and launches only it
    worker2 = FakeGpuWorker()
    fresh = [_rec(1, "nvidia"), _rec(2, "amd"), _rec(3, "amd"), _rec(4, "nvidia", fits=False), _rec(5, "nvidia")]
    _, tune2 = gpu_phase.run_case(_case(), fresh, worker2, gpu, ["mi300x"])
    # the cached winner and each space's best from the tuning run: the portability column survives reuse
    assert [j["config"]["BLOCK"] for op, j in worker2.requests if op == "gpu_config"] == [1, 2]
    assert tune2.runtime.winner_source == "cache"
    assert tune2.runtime.portability["mi300x"].slowdown == pytest.approx(1.5)
    _, tune3 = gpu_phase.run_case(_case(), fresh, FakeGpuWorker(), gpu, ["mi300x"], retune=True)
    assert tune3.runtime.winner_source == "tuned"
    # another target's winner comes from a stored run the user names, never from this host's cache
    stored = {("k", "fp16", "N8", "mi300x"): KnownWinner({"BLOCK": 2, "num_warps": 4})}
    _, tune4 = gpu_phase.run_case(_case(), fresh, FakeGpuWorker(), gpu, ["mi300x"], retune=True, stored=stored)
    assert tune4.runtime.portability["mi300x"].source.startswith("its winner in the stored run")
    assert tune4.runtime.portability["mi300x"].timing_method == "sustained"


def test_the_rounds_time_only_the_configs_a_decision_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finalist that lost on its full timing and is no space's best nor another target's winner keeps its full
    isolated timing but is not timed again in the sustained rounds: each item there costs the GPU a switch."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))

    class WithRunnerUp(FakeGpuWorker):
        US = {**FakeGpuWorker.US, 7: 104.0}

        def request(self, op: str, job: dict, timeout: float) -> dict:
            if op == "gpu_config" and job["config"]["BLOCK"] == 7:
                self.requests.append((op, job))
                us = 104.0 * (0.99 if job.get("stage") == "screen" else 1.0)
                return {"status": "ok", "timing": {"median_us": us}, "stage": job.get("stage", "full")}
            return super().request(op, job, timeout)

    worker = WithRunnerUp()
    built = [_rec(1, "nvidia"), _rec(7, "nvidia"), _rec(2, "amd")]
    gpu = GpuSlot(index="0", uuid="GPU-x", arch="sm_90", name="fake")
    records, tune = gpu_phase.run_case(_case(), built, worker, gpu, ["mi300x"])
    finals = sorted(job["config"]["BLOCK"] for op, job in worker.requests if job.get("stage") == "final")
    assert finals == [1, 2, 7]  # the runner-up (within 10% of the fastest screen) is timed in full ...
    assert sorted(worker.requests[-1][1]["configs"]) == ["BLOCK1", "BLOCK2"]  # ... but not in the rounds
    runner_up = records[1].runtime
    assert runner_up.stage == "final" and runner_up.timing.median_us == 104.0 and runner_up.sustained is None
    assert tune.config["BLOCK"] == 1 and tune.runtime.timing_method == "sustained"
    assert tune.runtime.portability["mi300x"].timing_method == "sustained"  # the AMD space's best: in the rounds
    # another target's known winner is priced by its sustained timing, so it stays in the rounds
    stored = {("k", "fp16", "N8", "mi300x"): KnownWinner({"BLOCK": 7, "num_warps": 4})}
    again = WithRunnerUp()
    _, tune2 = gpu_phase.run_case(_case(), built, again, gpu, ["mi300x"], retune=True, stored=stored)
    assert sorted(again.requests[-1][1]["configs"]) == ["BLOCK1", "BLOCK2", "BLOCK7"]
    assert tune2.runtime.portability["mi300x"].slowdown == pytest.approx(104.0 / 100.0)


def test_where_the_config_requests_time_goes_is_the_cases_not_each_configs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each config request says where its seconds went; the tune record's phases sum them by step (what a night's
    configs phase is made of), and no config's runtime entry, nor its record's JSON, carries them."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))

    class Laps(FakeGpuWorker):
        def request(self, op: str, job: dict, timeout: float) -> dict:
            got = super().request(op, job, timeout)
            if op == "gpu_config":
                stage = job.get("stage", "full")
                got["spent_s"] = {"case inputs": 0.5, "check": 0.25, f"{stage} timing": 0.125}
            return got

    built = [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia")]
    gpu = GpuSlot(index="0", uuid="GPU-x", arch="sm_90", name="fake")
    records, tune = gpu_phase.run_case(_case(), built, Laps(), gpu, ["mi300x"])
    detail = tune.runtime.phases_s.configs_detail
    # three screens (1, 2, 5), then two full timings (1 and 2: the fastest, and the AMD space's best)
    assert detail == {"case inputs": 2.5, "check": 1.25, "screen timing": 0.375, "final timing": 0.25}
    assert all(r.runtime is not None and not r.runtime.has("spent_s") for r in records)
    assert all("spent_s" not in json.dumps(r.to_dict()) for r in records)


def test_the_tune_record_carries_the_options_its_winner_ignores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A winner from another vendor's list (an AMD config timed on the H200) launches without the options this
    backend ignores; its tune record says which, as its build record does, so a reader launches it the same way."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    amd = dataclasses.replace(_rec(1, "amd"), ignored_options=["waves_per_eu"])
    _, tune = gpu_phase.run_case(_case(), [amd, _rec(2, "nvidia")], FakeGpuWorker(), GpuSlot(index="0"), [])
    assert tune.status == "ok" and tune.config["BLOCK"] == 1 and tune.ignored_options == ["waves_per_eu"]


def test_each_xdist_worker_is_pinned_to_its_own_gpu() -> None:
    gpus = [
        GpuSlot(index="0", uuid="GPU-aaa", arch="sm_90", name="H200"),
        GpuSlot(index="1", uuid="GPU-bbb", arch="sm_90", name="H200"),
    ]
    assert pick_device("gw0", gpus).uuid == "GPU-aaa"
    assert pick_device("gw1", gpus).uuid == "GPU-bbb"
    assert pick_device("gw2", gpus).uuid == "GPU-aaa"  # more workers than GPUs share, under the GPU lock
    assert pick_device(None, gpus).uuid == "GPU-aaa"
    assert pick_device("gw0", []) is None
    env = pinned_env({"CUDA_VISIBLE_DEVICES": "0,1", "HIP_VISIBLE_DEVICES": "1"}, gpus[1])
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-bbb" and "HIP_VISIBLE_DEVICES" not in env


def _hip_device(env: dict[str, str], physical: int) -> int | None:
    """Which physical GPU a HIP process sees as its device 0: ROCr keeps the devices ROCR_VISIBLE_DEVICES names
    (in that order) and renumbers them from 0; HIP then picks by HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES)
    among those."""
    kept = [int(i) for i in env.get("ROCR_VISIBLE_DEVICES", ",".join(map(str, range(physical)))).split(",")]
    hip = env.get("HIP_VISIBLE_DEVICES", env.get("CUDA_VISIBLE_DEVICES"))
    chosen = [kept[int(i)] for i in hip.split(",") if int(i) < len(kept)] if hip is not None else kept
    return chosen[0] if chosen else None


def test_each_worker_of_an_8_gpu_amd_host_gets_its_own_device() -> None:
    """rocminfo's eight gfx942 agents (as device.local_gpus parses them) and eight pytest workers: each worker's
    HIP device 0 is another physical GPU (the old pinning, HIP index i after ROCr's filter, left workers 1-7
    with none)."""
    gpus = [GpuSlot(index=str(i), uuid="", arch="gfx942", name="AMD Instinct MI300X") for i in range(8)]
    seen = []
    for slot in range(8):
        env = pinned_env({"HIP_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"}, pick_device(f"gw{slot}", gpus))
        seen.append(_hip_device(env, 8))
    assert seen == list(range(8))
    old = {"ROCR_VISIBLE_DEVICES": "3", "HIP_VISIBLE_DEVICES": "3"}
    assert _hip_device(old, 8) is None  # what the earlier rule did to worker 3


class SlowFakeGpuWorker(FakeGpuWorker):
    """Each request takes a little wall time, as a real launch does."""

    def request(self, op: str, job: dict, timeout: float) -> dict:
        time.sleep(0.02)
        return super().request(op, job, timeout)


def test_timings_never_share_a_gpu_and_two_gpus_run_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four pytest processes' worth of cases on two fake GPUs: the lock serialises per GPU, not across GPUs."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    gpus = [
        GpuSlot(index="0", uuid="GPU-aaa", arch="sm_90", name="fake"),
        GpuSlot(index="1", uuid="GPU-bbb", arch="sm_90", name="fake"),
    ]
    barrier = threading.Barrier(4)
    tunes: list[Record] = []

    def one(slot: int) -> None:
        gpu = pick_device(f"gw{slot}", gpus)  # gw0, gw2 -> GPU 0; gw1, gw3 -> GPU 1
        records = [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia")]
        barrier.wait()
        records, tune = gpu_phase.run_case(_case(), records, SlowFakeGpuWorker(), gpu, [], retune=True)
        assert all(r.runtime.gpu.uuid == gpu.uuid for r in records)  # each record names its device
        tunes.append(tune)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(tunes) == 4
    assert device_tables.gpu_overlaps(tunes) == []
    table = device_tables.device_table(analyse([], tunes), fmt="simple").splitlines()
    assert table[0].split()[4] == "gpu" and sorted(line.split()[4] for line in table[2:]) == ["0", "0", "1", "1"]
    spans = {g: sorted(t.runtime.gpu_window for t in tunes if t.runtime.gpu.uuid == g) for g in ("GPU-aaa", "GPU-bbb")}
    assert all(len(v) == 2 for v in spans.values())
    a, b = spans["GPU-aaa"][0], spans["GPU-bbb"][0]
    assert a[0] < b[1] and b[0] < a[1]  # the two GPUs' first cases ran at the same time
    # the audit does catch a shared GPU
    clash = Record.from_dict(
        {**tunes[0].to_dict(), "runtime": {**tunes[0].runtime.to_json(), "gpu_window": [a[0], a[1] + 1.0]}}
    )
    twin = Record.from_dict(
        {**tunes[0].to_dict(), "runtime": {**tunes[0].runtime.to_json(), "gpu_window": [a[0] + 0.001, a[1]]}}
    )
    assert len(device_tables.gpu_overlaps([clash, twin])) == 1


def test_launch_parity_compares_the_launched_binary_with_the_static_artifact() -> None:
    def rec(runtime: dict) -> Record:
        return Record.from_dict(
            {
                "kernel": "k",
                "dtype": "fp16",
                "shape": {},
                "target": "h200",
                "arch": "sm_90",
                "vendor": "nvidia",
                "triton": "x",
                "config": {},
                "config_id": "c",
                "meta": {},
                "origin": "nvidia",
                "mode": "compile",
                "status": "ok",
                "artifacts": {"cubin": {"path": "p", "sha256": "aa"}},
                "runtime": runtime,
            }
        )

    same = rec({"status": "ok", "launched_binary": {"kind": "cubin", "sha256": "aa"}})
    other = rec({"status": "ok", "launched_binary": {"kind": "cubin", "sha256": "bb"}})
    unseen = rec({"status": "ok", "launched_binary": {"note": "no new JIT kernel"}})
    failed = rec({"status": "launch_error"})
    assert [launch_parity(r, r.runtime).launch_parity for r in (same, other, unseen, failed)] == [
        "identical",
        "differs",
        "not observed",
        None,
    ]


def test_a_baseline_that_changes_the_process_retires_the_gpu_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.compile sets variables that change later Triton compiles in its process: such a worker retires."""
    import os

    from harness.device import baselines

    before = dict(os.environ)
    assert baselines._process_changes(before, True) == ""
    monkeypatch.setenv("TRITON_CACHE_DIR", "/tmp/torchinductor_x/triton/0")
    assert baselines._process_changes(before, True) == "environment variables changed: TRITON_CACHE_DIR"


@pytest.mark.parametrize("sustained_retires", [True, False])
def test_a_changed_worker_serves_its_case_to_the_end_then_retires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sustained_retires: bool
) -> None:
    """A torch.compile baseline taints the worker: the case's sustained rounds still run in it (no second compile),
    and the worker retires after the case: by the sustained request's reply, or by the GPU phase itself."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))

    class Tainting(FakeGpuWorker):
        retired = 0

        def request(self, op: str, job: dict, timeout: float) -> dict:
            reply = super().request(op, job, timeout)
            if op == "gpu_baselines":
                reply["tainted"] = "torch._inductor imported"
            if op == "gpu_sustained" and sustained_retires:
                reply["retire_worker"] = "torch._inductor imported"
            return reply

        def retire(self) -> None:
            self.retired += 1

    worker = Tainting()
    gpu = GpuSlot(index="0", uuid="GPU-x", arch="sm_90", name="fake")
    _, tune = gpu_phase.run_case(_case(), [_rec(1, "nvidia"), _rec(5, "nvidia")], worker, gpu, [])
    ops = [op for op, _ in worker.requests]
    assert ops.index("gpu_sustained") > ops.index("gpu_baselines")  # same worker, no request in between
    assert worker.retired == (0 if sustained_retires else 1)
    assert tune.runtime.gpu_worker_retired == "torch._inductor imported"
    assert tune.runtime.phases_s.sustained is not None and tune.runtime.phases_s.baselines is not None


def test_a_kernel_reused_from_an_earlier_launch_is_found_by_its_cache_key() -> None:
    from harness.device import operations

    class Kernel:
        def __init__(self, key: str, cubin: bytes) -> None:
            self.hash, self.asm = key, {"ttir": "tt.func public @k() {", "cubin": cubin}

    a, b = Kernel("ka", b"A"), Kernel("kb", b"B")
    cache = {id(a): a, id(b): b}
    fresh = operations._launched_binary({id(a): a}, cache)
    assert fresh.cache_key == "kb" and fresh.kind == "cubin" and fresh.note is None
    reused = operations._launched_binary(cache, cache, "ka")
    assert reused.cache_key == "ka" and (reused.note or "").startswith("reused")
    assert operations._launched_binary(cache, cache).sha256 is None  # nothing new, no key: not observed


def test_a_duplicate_build_is_not_launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    records = [_rec(1, "nvidia"), _rec(2, "amd")]
    records[1] = dataclasses.replace(records[1], duplicate_of="BLOCK1")
    worker = FakeGpuWorker()
    records, _ = gpu_phase.run_case(
        _case(), records, worker, GpuSlot(index="0", uuid="", arch="sm_90", name="fake"), []
    )
    assert {job["config"]["BLOCK"] for op, job in worker.requests if op == "gpu_config"} == {1}
    assert records[1].runtime.status == "not_launched"
    assert "same binary as BLOCK1" in records[1].runtime.reason


def test_a_config_added_to_the_space_is_tried_without_retune(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cached winner was chosen among configs 1, 2 and 5; with 6 added (the fastest) the next run tunes again
    and finds it. A winner cached by an older harness (no context recorded) is re-tuned too."""
    import json

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    gpu = GpuSlot(index="0", uuid="GPU-x", arch="sm_90", name="fake")

    class Faster6(FakeGpuWorker):
        def request(self, op: str, job: dict, timeout: float) -> dict:
            if op == "gpu_config" and job["config"]["BLOCK"] == 6:
                self.requests.append((op, job))
                return {
                    "status": "ok",
                    "timing": {"median_us": 80.0, "p20_us": 80.0, "p80_us": 80.0},
                    "stage": job.get("stage", "full"),
                }
            return super().request(op, job, timeout)

    _, first = gpu_phase.run_case(_case(), [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia")], Faster6(), gpu, [])
    assert first.config["BLOCK"] == 1 and first.runtime.tuned_because == "no cached winner"
    _, same = gpu_phase.run_case(_case(), [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia")], Faster6(), gpu, [])
    assert same.runtime.winner_source == "cache"
    worker = Faster6()
    _, grown = gpu_phase.run_case(
        _case(), [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia"), _rec(6, "nvidia")], worker, gpu, []
    )
    assert grown.runtime.winner_source == "tuned" and "config_space changed" in grown.runtime.tuned_because
    assert grown.config["BLOCK"] == 6 and 6 in {j["config"]["BLOCK"] for op, j in worker.requests if op == "gpu_config"}
    # another device model, another driver: the cached winner is not reused
    _, other = gpu_phase.run_case(
        _case(),
        [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia"), _rec(6, "nvidia")],
        Faster6(),
        dataclasses.replace(gpu, name="other"),
        [],
    )
    assert "device_model changed" in other.runtime.tuned_because
    _, driver = gpu_phase.run_case(
        _case(),
        [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia"), _rec(6, "nvidia")],
        Faster6(),
        dataclasses.replace(gpu, name="other", driver="999.1"),
        [],
    )
    assert "driver changed" in driver.runtime.tuned_because
    # an entry written before the context was recorded
    for path in (tmp_path / "cache" / "winners").glob("*.json"):
        entry = json.loads(path.read_text())
        path.write_text(
            json.dumps({k: v for k, v in entry.items() if k not in ("config_space", "torch", "device_model")})
        )
    _, old = gpu_phase.run_case(
        _case(),
        [_rec(1, "nvidia"), _rec(2, "amd"), _rec(5, "nvidia"), _rec(6, "nvidia")],
        Faster6(),
        dataclasses.replace(gpu, name="other"),
        [],
    )
    assert old.runtime.winner_source == "tuned" and "config_space" in old.runtime.tuned_because


def test_a_gpu_phase_that_raises_leaves_the_builds_their_records() -> None:
    """The plugin's GPU phase catches what ``run_case`` raises: the builds keep their records (not launched, with
    the reason) and the case gets an error tune record, rather than losing everything the compiles found."""
    records = [_rec(1, "nvidia"), _rec(2, "amd")]
    ran = Runtime.from_json({"status": "ok", "timing": {"median_us": 5.0}})
    records[1] = dataclasses.replace(records[1], runtime=ran)  # a runtime it already had: kept
    built = records
    records, tune = tune_record.failed_tune(_case(), built, "the GPU phase failed: RuntimeError: driver gone")
    assert built[0].runtime is None  # new records come back; the builds' own are not touched
    assert tune.mode == "tune" and tune.status == "error" and "driver gone" in tune.error
    assert records[0].runtime.to_json() == {
        "status": "not_launched",
        "reason": "the GPU phase failed: RuntimeError: driver gone",
    }
    assert records[1].runtime.status == "ok"


@pytest.mark.parametrize("recompiles", [False, True])
def test_a_config_compiled_anew_in_a_changed_worker_is_not_timed(
    monkeypatch: pytest.MonkeyPatch, recompiles: bool
) -> None:
    """After a torch.compile baseline changed the worker, the sustained rounds may only launch kernels the configs'
    own checks loaded: a kernel the JIT compiles anew there (another ptxas, another cache) is refused, not timed."""
    from harness.device import baselines, sustained
    from harness.device.timing import summarize

    cache: dict[str, object] = {"k1": object()}

    class Fn:
        device_caches = {0: (cache, None)}

    class Spec:
        fn = Fn()
        baselines = {"lib": lambda inputs, shape: None}

        def run(self, inputs: tuple, shape: dict, config: dict) -> None:
            return None

    def fake_interleaved(items: list) -> dict:
        if recompiles:
            cache["k2"] = object()  # the JIT built another kernel during the rounds
        return {i.name: summarize([1.0, 1.0, 1.0], "sustained") for i in items}

    from harness.device.operations import CaseState

    state = CaseState("k", Spec(), (), None, {}, None, rotated=[()])
    monkeypatch.setattr(baselines, "_case", lambda job: state)
    monkeypatch.setattr(baselines, "_rotated", lambda state: [()])
    monkeypatch.setattr(sustained, "interleaved", fake_interleaved)
    monkeypatch.setattr(baselines._PERSIST, "tainted", "torch._inductor imported")
    reply = baselines.gpu_sustained(SustainedJob(ref="", dtype="", shape={}, configs={"c": {}}, baselines=("lib",)))
    assert reply.retire_worker == "torch._inductor imported"
    timings = reply.timings or {}
    assert timings["baseline lib"].status == "ok"
    config = timings["config c"]
    assert (config.status == "error" and "compiled anew" in (config.error or "")) is recompiles
