"""The worker boundary is typed: jobs are built by constructors, cross the pipe as JSON, and a key the two sides do
not agree on fails the first job that carries it, by name, instead of being read as absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.matrix.cases import compile_job, expand, interpret_job
from harness.matrix.reading import parse
from harness.model.jobs import CompileJob, InterpretJob, JobError, from_wire, to_wire
from harness.model.records import Record
from harness.model.runtime import GpuSlot
from harness.support import tritoncompat


def _cases(tmp_path: Path) -> list:
    path = tmp_path / "m.yaml"
    path.write_text(
        "name: jobs\ntargets: [h100]\nkernels:\n  vector_add:\n    dtypes: [fp32]\n    shapes: [{N: 4096}]\n"
        "    configs: [{BLOCK: 1024, num_warps: 4}]\n"
    )
    return expand(parse(path), tritoncompat.installed_triton_version())


def test_a_cases_jobs_round_trip_through_the_wire(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    built = next(c for c in cases if not c.is_interpret)
    checked = next(c for c in cases if c.is_interpret)
    job = compile_job(built, built.configs[0], str(tmp_path), prebuild_launcher=True)
    assert isinstance(job, CompileJob) and from_wire("compile", to_wire(job)) == job
    wire = to_wire(job)
    assert isinstance(wire["artifact_parts"], list) and wire["artifact_parts"][0] == "artifacts"  # JSON's own types
    assert wire["target"]["name"] == "h100" and wire["prebuild_launcher"] is True
    ijob = interpret_job(checked, checked.configs[0])
    assert isinstance(ijob, InterpretJob) and from_wire("interpret", to_wire(ijob)) == ijob


def test_a_misspelt_or_missing_key_and_an_unknown_kind_are_refused_by_name(tmp_path: Path) -> None:
    built = next(c for c in _cases(tmp_path) if not c.is_interpret)
    wire = to_wire(compile_job(built, built.configs[0], str(tmp_path)))
    with pytest.raises(JobError, match="unknown cofig"):
        from_wire("compile", {**{k: v for k, v in wire.items() if k != "config"}, "cofig": wire["config"]})
    with pytest.raises(JobError, match="missing dtype"):
        from_wire("compile", {k: v for k, v in wire.items() if k != "dtype"})
    with pytest.raises(JobError, match="no job of kind 'complie'"):
        from_wire("complie", wire)


def test_a_record_built_in_process_refuses_a_field_it_does_not_know() -> None:
    """Read from a file, an unknown key is dropped (an older or newer harness wrote it); built from a worker's reply
    in this process, it is an error naming the key."""
    fields = {
        **dict.fromkeys(("kernel", "dtype", "target", "arch", "vendor", "triton", "config_id", "origin"), "x"),
        **{"shape": {}, "config": {}, "meta": {}, "mode": "compile", "status": "ok", "fitz": True},
    }
    assert Record.from_dict(fields).kernel == "x"
    with pytest.raises(ValueError, match="fitz"):
        Record.from_dict(fields, strict=True)


def test_the_gpu_phases_requests_are_typed_and_a_worker_refuses_a_misspelt_one_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request the tuning stage sends is a job class; on the wire it decodes to the same job, and a real worker
    process (no GPU needed: the decoding comes first) answers a request with a key it does not know by naming it."""
    from test_ondevice_plumbing import FakeGpuWorker, _case, _rec

    from harness.execution.pool import Worker
    from harness.tuning import gpu_phase

    worker = FakeGpuWorker()
    gpu = GpuSlot(index="0", uuid="GPU-x", arch="sm_90", name="fake")
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    gpu_phase.run_case(_case(), [_rec(1, "nvidia"), _rec(2, "amd")], worker, gpu, [])
    ops = {op for op, _ in worker.requests}
    assert ops == {"gpu_config", "gpu_baselines", "gpu_sustained"}
    for op, wire in worker.requests:
        assert to_wire(from_wire(op, wire)) == wire
    stages = [wire["stage"] for op, wire in worker.requests if op == "gpu_config"]
    assert stages.count("screen") == 2 and "final" in stages
    real = Worker("interpret", dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    try:
        config = next(wire for op, wire in worker.requests if op == "gpu_config")
        reply = real.request("gpu_config", {**config, "stgae": "final"}, 120)
    finally:
        real.close()
    assert reply["status"] == "error" and "JobError" in reply["error"] and "unknown stgae" in reply["error"], reply
