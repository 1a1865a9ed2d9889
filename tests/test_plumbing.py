"""Small pieces around the compiles: names, paths, occupancy arithmetic, results files, verdicts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.reports import tables
from harness.naming import config_id, contained_path, safe_component, shape_id
from harness.records import Record, ResultsWriter, load_results
from harness.resources import amd_occupancy, nvidia_occupancy, parse_cuobjdump, parse_ptxas_verbose
from harness.targets import catalogue, get


def test_names_from_a_matrix_cannot_escape_the_output_dir(tmp_path: Path) -> None:
    for evil in ("../../etc", "/abs/path", "..", "a/../../b", "x\x00y", "~root"):
        path = contained_path(tmp_path, "artifacts", evil, "k")
        assert path.resolve().is_relative_to(tmp_path.resolve())
        assert "/" not in safe_component(evil) and safe_component(evil) not in ("..", ".")
    assert safe_component("a/b") != safe_component("a_b")  # sanitising never merges two names


def test_readable_ids() -> None:
    assert shape_id({"B": 4, "H": 16, "N": 4096, "D": 64, "causal": True}) == "B4xH16xN4096xD64xcausal"
    assert shape_id({"M": 1, "N": 2, "K": 3}) == "M1xN2xK3"
    assert config_id({"BLOCK_M": 128, "GROUP_M": 8, "num_warps": 8, "num_stages": 3, "waves_per_eu": 2}) \
        == "M128_GROUP_M8_w8_s3_wpe2"


def test_tool_output_parsers() -> None:
    assert parse_cuobjdump("Function k:\n  REG:40 STACK:8 SHARED:0 LOCAL:16 CONSTANT[0]:400") == \
        {"registers": 40, "stack_bytes": 8, "static_shared": 0, "local_bytes": 16}
    text = "    24 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads\nptxas info : Used 255 registers"
    assert parse_ptxas_verbose(text) == {"stack_frame_bytes": 24, "spill_store_bytes": 12,
                                         "spill_load_bytes": 20, "ptxas_registers": 255}
    with pytest.raises(ValueError):
        parse_cuobjdump("nothing here")


def test_occupancy_arithmetic() -> None:
    h100 = get("h100")
    # 128 regs x 256 threads: 32768 regs per block -> 2 blocks by registers
    assert nvidia_occupancy(h100, 128, 0, 8)["blocks_per_sm"] == 2
    # 150 KiB of shared memory: one block per SM
    assert nvidia_occupancy(h100, 32, 150 * 1024, 4)["blocks_per_sm"] == 1
    assert nvidia_occupancy(h100, 32, 240 * 1024, 4)["blocks_per_sm"] == 0
    mi300x = get("mi300x")
    # the compiler's 4 waves per SIMD, 4 waves per workgroup: 4 workgroups per CU without LDS
    assert amd_occupancy(mi300x, 4, 0, 4) == {"blocks_per_sm": 4, "occupancy": 4.0}
    assert amd_occupancy(mi300x, 4, 40000, 4) == {"blocks_per_sm": 1, "occupancy": 1.0}  # LDS: one workgroup
    assert amd_occupancy(mi300x, 4, 16384, 8) == {"blocks_per_sm": 2, "occupancy": 4.0}
    assert amd_occupancy(mi300x, 4, 70000, 4)["blocks_per_sm"] == 0


def test_catalogue_numbers_all_have_sources() -> None:
    for t in catalogue().values():
        cited = dict(t.sources)
        for key in ("shared_per_block", "max_threads_per_block", "sm_count", "hbm_tbps", "fp16_tflops"):
            assert cited.get(key), (t.name, key)
    assert {"h100", "h200", "a100", "b200", "mi300x", "mi250x", "mi355x"} <= set(catalogue())
    assert get("mi300x").warp_size == 64 and get("h100").warp_size == 32


def _record(target: str, vendor: str, shared: int, limit: int | None, config: dict | None = None,
            environment: str = "default", status: str = "ok") -> Record:
    flags = [{"resource": "shared", "value": shared, "limit": limit, "severity": "error"}] if limit else []
    config = config or {"BLOCK": 1}
    return Record(kernel="k", dtype="fp16", shape={"N": 1}, target=target, arch="x", vendor=vendor, triton="3.6.0",
                  config=config, config_id=config_id(config), meta=config, origin="nvidia", mode="compile",
                  status=status, error="PassManager::run failed" if status != "ok" else "",
                  resources={"shared": shared}, flags=flags, fits=not flags, environment=environment,
                  env={} if environment == "default" else {"TRITON_HIP_USE_ASYNC_COPY": "1"})


def test_verdicts() -> None:
    rows = tables.build_rows([_record("h100", "nvidia", 90000, None), _record("mi300x", "amd", 90000, 65536)])
    assert rows[0].verdict == "NVIDIA only" and rows[0].asymmetric
    rows = tables.build_rows([_record("h100", "nvidia", 10, None), _record("mi300x", "amd", 10, None)])
    assert rows[0].verdict == "fits both" and not rows[0].asymmetric
    summary = tables.summary_table([_record("h100", "nvidia", 1, None), _record("mi300x", "amd", 1, 65536)])
    assert "NVIDIA only" in summary


def test_opt_in_environments_only_add_risk_and_vendors_say_which_targets() -> None:
    from harness import verdicts

    # fits mi300x by default, exceeds under async copy: fits, at risk; never "NVIDIA only"
    row = verdicts.judge_row([_record("h100", "nvidia", 65536, None), _record("mi300x", "amd", 65536, None),
                              _record("mi300x", "amd", 98304, 65536, environment="async-copy")])
    assert row.targets["mi300x"].verdict == "at risk" and row.text == "fits both (at risk on mi300x)"
    assert "98304 > 65536" in row.targets["mi300x"].reasons[0] and not row.asymmetric
    # a compile error under the opt-in environment is reported beside an "exceeds", not instead of it
    row = verdicts.judge_row([_record("h100", "nvidia", 90000, None), _record("mi300x", "amd", 90000, 65536),
                              _record("mi300x", "amd", 0, None, environment="async-copy", status="error")])
    assert row.targets["mi300x"].verdict == "exceeds" and row.text == "NVIDIA only"
    assert "compile error: PassManager" in row.targets["mi300x"].beside[0]
    # fits MI355X, not MI300X: the AMD side says which
    row = verdicts.judge_row([_record("h100", "nvidia", 90000, None), _record("mi300x", "amd", 90000, 65536),
                              _record("mi355x", "amd", 90000, None)])
    assert row.vendors["amd"] == {"fitting": ["mi355x"], "not": ["mi300x"], "fits": "some"}
    assert row.text == "NVIDIA all; AMD mi355x only" and row.asymmetric
    # results.json: one entry per target column, the deciding one marked
    doc = verdicts.to_json(verdicts.judge([_record("mi300x", "amd", 65536, None),
                                           _record("mi300x", "amd", 98304, 65536, environment="async-copy")]))
    assert [(e["column"], e["deciding"], e["verdict"]) for e in doc["verdicts"]] == \
        [("mi300x", True, "at risk"), ("mi300x@async-copy", False, "exceeds")]


def test_results_survive_a_kill_between_rewrites(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path, {"host": "h"})
    for i in range(5):
        writer.add(_record("h100", "nvidia", i, None, {"BLOCK": i}))
    # no finish(): the process "died"; results.json may lag, records.jsonl does not
    _, records = load_results(tmp_path)
    assert len(records) == 5
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["schema_version"] == 2 and doc["run"].get("end") is None


def test_a_config_in_both_vendor_spaces_is_compiled_once(tmp_path: Path) -> None:
    """tests/data/optional_kernel.py lists {num_warps: 4} in both spaces: one entry, both origins."""
    from helpers import DATA

    from harness.cases import expand
    from harness.matrix import parse

    path = tmp_path / "m.yaml"
    path.write_text("name: both\ntargets: [h100, mi300x]\nkernels:\n  opt:\n"
                    f"    source: {DATA / 'optional_kernel.py'}:SPEC\n"
                    "    dtypes: [fp32]\n    shapes: [{N: 4096}]\n    interpret: false\n")
    matrix = parse(path)
    assert [(c.as_dict(), c.origin) for c in matrix.kernels[0].configs] == [({"num_warps": 4}, "nvidia+amd")]
    cases = [c for c in expand(matrix, "3.6.0") if c.environment.name == "default"]
    assert [len(c.configs) for c in cases] == [1, 1]
