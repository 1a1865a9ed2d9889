"""What a run with compiled entries says of its GPU work, read from a real run on an H100 (tests/data/compiled/
run-torch211-h100: ``harness run tests/data/compiled/run.yaml --targets h100`` there, docs/performance.md run CF):
each compiled function's speed-up over eager once per entry, shape and dtype (its kernels are timed through the
whole function, so the figure is the function's, never a kernel's); the configs the GPU checked counted as checked;
and a target the local GPU does not run named once in the terminal with what to do."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from helpers import DATA

from harness.analysis.findings import analyse
from harness.device.detection import match
from harness.model.runtime import GpuSlot, not_launched
from harness.model.targets import catalogue
from harness.render import terminal
from harness.results.store import load_results

RUN = DATA / "compiled" / "run-torch211-h100"


def test_a_compiled_function_s_speed_up_is_said_once_per_entry_and_gpu_checks_count() -> None:
    _, records = load_results(RUN)
    said = "\n".join(terminal.summary(analyse([], records)))
    # the answer first: each compiled function, what each target gets; the device's figures after
    assert said.startswith("compiled functions: what each target gets (graphs in report.md):"), said[:300]
    device = said.split("\non the device")[1].split("\ncaptured ops")[0]
    # the MLP's three kernels each timed the whole function: one line for the function, none per kernel
    assert device.count("mlp T512xD1024 bf16 on h100: compiled ") == 1, device
    assert "sum M8192xN8192 bf16 on h100: compiled 10.38–10.41× eager" in device, device
    assert "mlp.triton" not in device and "tuned on h100" not in device, device
    # every config was checked on the H100 against eager: counted as checked, not as "0 pass"
    assert "h100: 3 kernel(s), 5 config(s): no findings · checked 5 pass (5 on the GPU)" in said, said
    assert "not checked" not in said, said


def test_targets_the_local_gpu_does_not_run_are_said_once_with_device_as(tmp_path: Path) -> None:
    """An h100 run's builds on an H200 host: Hopper both, another model; the reason is the detector's own."""
    _, records = load_results(RUN)
    runs, reason = match(catalogue()["h100"], GpuSlot(index="0", arch="sm_90", name="NVIDIA H200", uuid=""))
    assert not runs and reason
    away = [dataclasses.replace(r, runtime=not_launched(reason)) for r in records if r.mode == "compile"]
    said = "\n".join(terminal.summary(analyse([], away)))
    assert said.count("not run on this GPU") == 1, said
    assert f"not run on this GPU ({len(away)} builds): static only: no h100 here" in said.replace("\n", " ")
    assert "--device-as h100" in said.replace("\n", " "), said


def test_each_kernel_s_share_of_the_call_s_gpu_time_is_said_under_the_function() -> None:
    """Where one call's GPU time goes, as an H100 split it (tests/data/compiled/run-torch211-h100-split: the same
    matrix on 2026-12-08, docs/performance.md call DC; the split held against the call's own span there by
    tests/gpu/test_compiled_run.py): under each function's speed-up, largest first, the rest named. The MLP's three
    kernels each measured the call: the split said is the one whose span is their median (45.296 µs of 44.736,
    45.296 and 45.84), not a blend; the mm's GEMM is cuBLAS's, so most of that call is the rest."""
    _, records = load_results(RUN.with_name("run-torch211-h100-split"))
    said = "\n".join(terminal.summary(analyse([], records)))
    device = " ".join(said.split("\non the device")[1].split("\nharness:")[0].split())
    assert device.count("GPU time of one call") == device.count(" on h100: compiled ") == 6, device
    assert (
        "mlp T512xD1024 bf16 on h100: compiled 1.03–1.06× eager GPU time of one call 45.3 µs: triton_poi_fused_gelu_1"
        " 15%, triton_per_fused_native_layer_norm_0 11%, triton_poi_fused_add_2 10%, the rest (extern kernels, "
        "copies, gaps, the timing events) 64%"
    ) in device, device
    assert "GPU time of one call 211.8 µs: triton_poi_fused_add_gelu_0 14%, the rest" in device, device
