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
    """The split the GPU worker records (``graph_time``, held against the call's own span on the GPU by
    tests/gpu/test_compiled_run.py) said under the function's speed-up, largest first, the rest named; the
    split kept is that of the case whose call's span is the median, not a blend of cases. Plumbing: the split is set
    here on the stored H100 run's tune records."""
    from harness.model.runtime import GraphTime

    _, records = load_results(RUN)
    parts = {  # by the tune case's kernel: what its worker measured of one call of the MLP
        "mlp.triton_per_fused_native_layer_norm_0": GraphTime(
            total_us=40.0, kernels={"a_0": 10.0, "b_1": 20.0}, reps=10
        ),
        "mlp.triton_poi_fused_gelu_1": GraphTime(total_us=50.0, kernels={"a_0": 5.0, "b_1": 30.0}, reps=10),
        "mlp.triton_poi_fused_add_2": GraphTime(total_us=60.0, kernels={"a_0": 1.0}, reps=10),
    }
    split = [dataclasses.replace(r, runtime=r.runtime.updated(graph_time=parts[r.kernel]))
             if r.mode == "tune" and r.kernel in parts else r for r in records]  # fmt: skip
    said = "\n".join(terminal.summary(analyse([], split)))
    device = said.split("\non the device")[1].split("\ncaptured ops")[0]
    assert "  GPU time of one call 50.0 µs: b_1 60%, a_0 10%, the rest (extern kernels, copies, gaps) 30%" in device, (
        device
    )
    assert device.count("GPU time of one call") == 1, device
