"""Small pieces around the compiles: names, paths, occupancy arithmetic, results files, verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.analysis.findings import analyse
from harness.analysis.rows import build_rows
from harness.compiling.resources import amd_occupancy, nvidia_occupancy, parse_cuobjdump, parse_ptxas_verbose
from harness.model.ids import config_id, contained_path, safe_component, shape_id
from harness.model.payloads import LimitFlag, Resources
from harness.model.records import Record
from harness.model.run_info import RunInfo
from harness.model.targets import catalogue, get
from harness.pytest_plugin.writer import ResultsWriter
from harness.render import tables
from harness.results.store import load_results


def test_names_from_a_matrix_cannot_escape_the_output_dir(tmp_path: Path) -> None:
    for evil in ("../../etc", "/abs/path", "..", "a/../../b", "x\x00y", "~root"):
        path = contained_path(tmp_path, "artifacts", evil, "k")
        assert path.resolve().is_relative_to(tmp_path.resolve())
        assert "/" not in safe_component(evil) and safe_component(evil) not in ("..", ".")
    assert safe_component("a/b") != safe_component("a_b")  # sanitising never merges two names


def test_readable_ids() -> None:
    assert shape_id({"B": 4, "H": 16, "N": 4096, "D": 64, "causal": True}) == "B4xH16xN4096xD64xcausal"
    assert shape_id({"M": 1, "N": 2, "K": 3}) == "M1xN2xK3"
    assert (
        config_id({"BLOCK_M": 128, "GROUP_M": 8, "num_warps": 8, "num_stages": 3, "waves_per_eu": 2})
        == "M128_GROUP_M8_w8_s3_wpe2"
    )


def test_tool_output_parsers() -> None:
    assert parse_cuobjdump("Function k:\n  REG:40 STACK:8 SHARED:0 LOCAL:16 CONSTANT[0]:400") == {
        "registers": 40,
        "stack_bytes": 8,
        "static_shared": 0,
        "local_bytes": 16,
    }
    text = "    24 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads\nptxas info : Used 255 registers"
    assert parse_ptxas_verbose(text) == {
        "stack_frame_bytes": 24,
        "spill_store_bytes": 12,
        "spill_load_bytes": 20,
        "ptxas_registers": 255,
    }
    with pytest.raises(ValueError):
        parse_cuobjdump("nothing here")


# CUDA's occupancy calculator on sm_90 (65536 registers in 4 sub-partitions, 256-register units per warp, 64 warps
# and 32 blocks per SM, 233472 B of shared memory per SM, 1 KiB reserved per block), worked by hand:
# (registers, warps, dynamic shared, static shared) -> blocks per SM
CUDA_RULES = [
    (128, 8, 0, 0, 2),  # 4096 per warp: 4 warps per sub-partition, 16 per SM, 2 blocks of 8
    (200, 1, 0, 0, 8),  # 6400 per warp: 2 per sub-partition (not 65536 // 6400 = 10 per SM)
    (200, 2, 0, 0, 4),
    (168, 2, 0, 0, 6),  # 5376 per warp: 3 per sub-partition, 12 per SM
    (255, 8, 0, 0, 1),  # 8160 rounds to 8192: 2 per sub-partition
    (255, 4, 0, 0, 2),
    (32, 4, 0, 0, 16),  # warps per SM: 64 // 4
    (32, 1, 0, 0, 32),  # blocks per SM: 32
    (32, 2, 0, 0, 32),
    (64, 4, 150 * 1024, 0, 1),
    (64, 4, 115712, 0, 2),  # 115712 + 1024 reserved = 116736: two per SM ...
    (64, 4, 115712, 1024, 1),  # ... but not with the binary's 1 KiB of static shared memory on top
    (64, 4, 240 * 1024, 0, 0),
    (64, 4, 232448, 1024, 0),  # static + dynamic over the per-block opt-in maximum
]


@pytest.mark.parametrize("registers,warps,shared,static,blocks", CUDA_RULES)
def test_nvidia_occupancy_follows_cuda_rules(registers: int, warps: int, shared: int, static: int, blocks: int) -> None:
    got = nvidia_occupancy(get("h100"), registers, shared, warps, static)
    assert got == {"blocks_per_sm": blocks, "occupancy": blocks * warps / 4}


# gfx942 (4 SIMDs per CU, 64 KiB LDS): (compiler's waves per SIMD, waves per workgroup, LDS) -> workgroups per CU
AMD_WHOLE_WORKGROUPS = [
    (4, 4, 0, 4),
    (4, 4, 40000, 1),
    (4, 8, 16384, 2),
    (3, 8, 0, 1),  # 8 waves at 3 per SIMD: one workgroup
    (8, 16, 0, 2),
    (5, 16, 0, 1),
    (8, 1, 0, 32),
    (2, 2, 0, 4),
    (4, 4, 70000, 0),
]


@pytest.mark.parametrize("waves,warps,shared,blocks", AMD_WHOLE_WORKGROUPS)
def test_amd_occupancy_counts_whole_workgroups(waves: int, warps: int, shared: int, blocks: int) -> None:
    assert amd_occupancy(get("mi300x"), waves, shared, warps) == {
        "blocks_per_sm": blocks,
        "occupancy": blocks * warps / 4,
    }


def test_catalogue_numbers_all_have_sources() -> None:
    for t in catalogue().values():
        cited = dict(t.sources)
        for key in ("shared_per_block", "max_threads_per_block", "sm_count", "hbm_tbps", "fp16_tflops"):
            assert cited.get(key), (t.name, key)
    assert {"h100", "h200", "a100", "b200", "mi300x", "mi250x", "mi355x"} <= set(catalogue())
    assert get("mi300x").warp_size == 64 and get("h100").warp_size == 32


def _record(
    target: str,
    vendor: str,
    shared: int,
    limit: int | None,
    config: dict | None = None,
    environment: str = "default",
    status: str = "ok",
) -> Record:
    flags = [LimitFlag("shared", shared, limit, "error")] if limit else []
    config = config or {"BLOCK": 1}
    return Record(
        kernel="k",
        dtype="fp16",
        shape={"N": 1},
        target=target,
        arch="x",
        vendor=vendor,
        triton="3.6.0",
        config=config,
        config_id=config_id(config),
        meta=config,
        origin="nvidia",
        mode="compile",
        status=status,
        error="PassManager::run failed" if status != "ok" else "",
        resources=Resources(shared=shared),
        flags=flags,
        fits=not flags,
        environment=environment,
        env={} if environment == "default" else {"TRITON_HIP_USE_ASYNC_COPY": "1"},
    )


def test_verdicts() -> None:
    rows = build_rows([_record("h100", "nvidia", 90000, None), _record("mi300x", "amd", 90000, 65536)])
    assert rows[0].verdict == "NVIDIA only" and rows[0].asymmetric
    rows = build_rows([_record("h100", "nvidia", 10, None), _record("mi300x", "amd", 10, None)])
    assert rows[0].verdict == "fits both" and not rows[0].asymmetric
    summary = tables.summary_table(
        analyse([], [_record("h100", "nvidia", 1, None), _record("mi300x", "amd", 1, 65536)])
    )
    assert "NVIDIA only" in summary


def test_opt_in_environments_only_add_risk_and_vendors_say_which_targets() -> None:
    from harness.analysis import stored_verdicts, verdicts

    # fits mi300x by default, exceeds under async copy: fits, at risk; never "NVIDIA only"
    row = verdicts.judge_row(
        [
            _record("h100", "nvidia", 65536, None),
            _record("mi300x", "amd", 65536, None),
            _record("mi300x", "amd", 98304, 65536, environment="async-copy"),
        ]
    )
    assert row.targets["mi300x"].verdict == "at risk" and row.text == "fits both (at risk on mi300x)"
    assert "98304 > 65536" in row.targets["mi300x"].reasons[0] and not row.asymmetric
    # a compile error under the opt-in environment is reported beside an "exceeds", not instead of it
    row = verdicts.judge_row(
        [
            _record("h100", "nvidia", 90000, None),
            _record("mi300x", "amd", 90000, 65536),
            _record("mi300x", "amd", 0, None, environment="async-copy", status="error"),
        ]
    )
    assert row.targets["mi300x"].verdict == "exceeds" and row.text == "NVIDIA only"
    assert "compile error: PassManager" in row.targets["mi300x"].beside[0]
    # fits MI355X, not MI300X: the AMD side says which
    row = verdicts.judge_row(
        [
            _record("h100", "nvidia", 90000, None),
            _record("mi300x", "amd", 90000, 65536),
            _record("mi355x", "amd", 90000, None),
        ]
    )
    assert row.vendors["amd"].to_json() == {"fitting": ["mi355x"], "not": ["mi300x"], "incomplete": [], "fits": "some"}
    assert row.text == "NVIDIA all; AMD mi355x only" and row.asymmetric
    # results.json: one entry per target column, the deciding one marked
    doc = stored_verdicts.stored(
        verdicts.judge(
            [_record("mi300x", "amd", 65536, None), _record("mi300x", "amd", 98304, 65536, environment="async-copy")]
        )
    ).to_json()
    assert [(e["column"], e["deciding"], e["verdict"]) for e in doc["verdicts"]] == [
        ("mi300x", True, "at risk"),
        ("mi300x@async-copy", False, "exceeds"),
    ]


def test_results_survive_a_kill_between_rewrites(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path, RunInfo(host="h"))
    for i in range(5):
        writer.add(_record("h100", "nvidia", i, None, {"BLOCK": i}))
    # no finish(): the process "died"; results.json may lag, records.jsonl does not
    _, records = load_results(tmp_path)
    assert len(records) == 5
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["schema_version"] == 3 and doc["run"].get("end") is None


def test_a_config_in_both_vendor_spaces_is_compiled_once(tmp_path: Path) -> None:
    """tests/data/optional_kernel.py lists {num_warps: 4} in both spaces: one entry, both origins."""
    from helpers import DATA

    from harness.matrix.cases import expand
    from harness.matrix.reading import parse

    path = tmp_path / "m.yaml"
    path.write_text(
        "name: both\ntargets: [h100, mi300x]\nkernels:\n  opt:\n"
        f"    source: {DATA / 'optional_kernel.py'}:SPEC\n"
        "    dtypes: [fp32]\n    shapes: [{N: 4096}]\n    interpret: false\n"
    )
    matrix = parse(path)
    assert [(c.as_dict(), c.origin) for c in matrix.kernels[0].configs] == [({"num_warps": 4}, "nvidia+amd")]
    cases = [c for c in expand(matrix, "3.6.0") if c.environment.name == "default"]
    assert [len(c.configs) for c in cases] == [1, 1]


def test_every_commands_help_renders() -> None:
    """argparse formats help text with %: one stray percent sign made `harness report --help` a traceback."""
    import argparse

    from harness.cli import build_parser

    def walk(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return [parser] + [p for s in subs for child in s.choices.values() for p in walk(child)]

    parsers = walk(build_parser())
    assert len(parsers) >= 9
    for parser in parsers:
        assert parser.format_help().startswith("usage: harness")


def test_every_cli_number_is_range_checked(capsys) -> None:
    """NaN, negative or out-of-range numbers and worker counts are argparse errors (exit 2, one message line)."""
    import pytest

    from harness.cli import build_parser

    bad = [
        ["compare", "a", "b", "--threshold", "nan"],
        ["compare", "a", "b", "--threshold", "-1"],
        ["compare", "a", "b", "--alpha", "2"],
        ["compare", "a", "b", "--fdr", "0"],
        ["compare", "a", "b", "--noise-floor", "inf"],
        ["compare", "a", "b", "--min-us", "-5"],
        ["compare", "a", "b", "--compile-threshold", "0"],
        ["history", "show", "--threshold", "nan"],
        ["history", "show", "--hold", "0"],
        ["history", "show", "--hold", "1.5"],
        ["run", "-n", "-1"],
        ["run", "-n", "many"],
    ]
    for argv in bad:
        with pytest.raises(SystemExit) as exc:
            build_parser().parse_args(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and err[-1].startswith("harness ") and "error: argument" in err[-1], argv
    ok = build_parser().parse_args(["compare", "a", "b", "--threshold", "0.1", "--alpha", "0.01"])
    assert ok.threshold == 0.1 and ok.alpha == 0.01


def test_targets_given_on_the_command_line_are_checked(tmp_path) -> None:
    from helpers import run_cli

    for value, message in (("", "unknown target(s) ''"), ("h100,h100", "named twice")):
        proc = run_cli("run", "--targets", value, "--out", str(tmp_path / "out"))
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_two_kernel_files_of_one_name_are_two_modules_named_apart_from_their_checkout(tmp_path: Path) -> None:
    """A kernel file's module name is its folder's and its own and its text's digest (Triton writes it into a
    ``noinline`` helper's symbol, so it must not name where the checkout lies), ASCII however its folder is named;
    two files of the same names are two modules in any process, and a second file of the same text too."""
    import hashlib
    import sys

    from harness.intake.importing import import_attr

    made = []
    for place, folder_name, value in (
        ("a", "kernels", 1),
        ("b", "kernels", 2),
        ("c", "kernels", 1),
        ("u", "kernéls", 3),
    ):
        folder = tmp_path / place / folder_name
        folder.mkdir(parents=True)
        (folder / "add.py").write_text(f"VALUE = {value}\n")
        made.append(folder / "add.py")
    digest = [hashlib.sha256(path.read_bytes()).hexdigest()[:12] for path in made]
    try:
        assert [import_attr(f"{path}:VALUE") for path in made] == [1, 2, 1, 3]
        names = {m.__file__: n for n, m in sys.modules.items() if n.startswith("harness_kernel_kern")}
        assert names[str(made[0])] == f"harness_kernel_kernels_add_{digest[0]}"
        assert names[str(made[1])] == f"harness_kernel_kernels_add_{digest[1]}" != names[str(made[0])]
        assert names[str(made[2])].startswith(f"harness_kernel_kernels_add_{digest[0]}_")  # the same text elsewhere
        assert names[str(made[3])] == f"harness_kernel_kern_ls_add_{digest[3]}"
    finally:
        for name in [n for n, m in sys.modules.items() if getattr(m, "__file__", None) in map(str, made)]:
            del sys.modules[name]
        sys.path[:] = [p for p in sys.path if p not in {str(path.parent) for path in made}]
