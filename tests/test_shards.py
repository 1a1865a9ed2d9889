"""Shards (:mod:`harness.matrix.shards`): every case in exactly one shard, balanced by builds, stable when the matrix
grows, named from the CI engine's own variables; and real ``harness run --shard`` processes that together run
exactly the cases one run would."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import REPO, call_cli, run_cli, write_matrix

from harness.matrix import shards
from harness.matrix.cases import expand
from harness.matrix.reading import parse
from harness.support import tritoncompat


def _costs(path: Path, drop: str | None = None) -> dict[str, float]:
    return {
        c.id: shards.case_cost(len(c.configs), c.is_interpret)
        for c in expand(parse(path), tritoncompat.installed_triton_version())
        if c.kernel != drop
    }


def _units(path: Path) -> dict[str, str]:
    return {c.id: c.shard_unit for c in expand(parse(path), tritoncompat.installed_triton_version())}


@pytest.mark.parametrize("matrix", ["smoke", "nightly"])
@pytest.mark.parametrize("total", [1, 3, 4, 7])
def test_every_case_once_and_the_largest_shard_near_the_mean(matrix: str, total: int) -> None:
    costs, units = _costs(REPO / "matrices" / f"{matrix}.yaml"), _units(REPO / "matrices" / f"{matrix}.yaml")
    got = shards.assign_cases(costs, units, total)
    assert set(got) == set(costs) and set(got.values()) <= set(range(1, total + 1))
    assert all(got[c] == got[d] for c in got for d in got if units[c] == units[d])  # a report row's cases together
    loads = [sum(costs[c] for c, s in got.items() if s == shard) for shard in range(1, total + 1)]
    print(f"{matrix}, {total} shards, builds: {loads}")
    assert max(loads) <= 1.25 * sum(loads) / total, loads
    assert shards.assign_cases(dict(reversed(list(costs.items()))), units, total) == got  # order is no input


def test_the_nightly_static_part_balances_by_build_count() -> None:
    """Issue 25's measure: the compile cases of the nightly matrix over 4 shards, by build count."""
    cases = [c for c in expand(parse(REPO / "matrices" / "nightly.yaml"), tritoncompat.installed_triton_version())]
    builds = {c.id: float(len(c.configs)) for c in cases if not c.is_interpret and c.configs}
    got = shards.assign_cases(builds, {c.id: c.shard_unit for c in cases}, 4)
    loads = [sum(builds[c] for c, s in got.items() if s == shard) for shard in range(1, 5)]
    print(f"nightly static part, 4 shards, builds: {loads}")
    assert max(loads) <= 1.25 * sum(loads) / 4


# the nightly is the claim (hundreds of cases); the default matrix is a bound on a small one: 43-46 cases over up
# to 7 shards (6 a shard), where matmul is a quarter of the builds, so its arrival moves each shard's capacity
@pytest.mark.parametrize("matrix, share", [("nightly", 0.10), ("smoke", 0.45)])
def test_a_kernel_added_moves_few_of_the_other_cases(matrix: str, share: float) -> None:
    path = REPO / "matrices" / f"{matrix}.yaml"
    full, units = _costs(path), _units(path)
    for total in (3, 4, 7):
        grown = shards.assign_cases(full, units, total)
        for kernel in sorted({c.split("[")[0] for c in full}):
            before = shards.assign_cases(_costs(path, drop=kernel), units, total)
            moved = sum(1 for c in before if before[c] != grown[c])
            print(f"{matrix} {total} shards, {kernel} added: {moved} of {len(before)} other cases moved")
            assert moved <= share * len(before), (kernel, total, moved)


def test_the_shard_comes_from_the_ci_engine() -> None:
    assert str(shards.parse("2/4", {})) == "2/4"
    assert shards.parse("auto", {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"}) == shards.Shard(
        1, 3, "CI_NODE_INDEX/CI_NODE_TOTAL"
    )
    assert (shards.parse("auto", {"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}).index) == 1
    assert shards.parse("auto", {"JOB_COMPLETION_INDEX": "6", "HARNESS_SHARD_TOTAL": "7"}).index == 7
    assert shards.parse("auto", {"HARNESS_SHARD": "3/5", "CI_NODE_INDEX": "1"}) == shards.Shard(3, 5, "HARNESS_SHARD")
    for text, env, said in (
        ("5/4", {}, "does not exist"),
        ("two", {}, "neither I/N"),
        ("auto", {}, "no shard in the environment"),
        ("auto", {"JOB_COMPLETION_INDEX": "0"}, "HARNESS_SHARD_TOTAL is not"),
        ("auto", {"CI_NODE_INDEX": "x", "CI_NODE_TOTAL": "2"}, "whole numbers"),
    ):
        with pytest.raises(shards.ShardError, match=said):
            shards.parse(text, env)


def test_shards_run_exactly_the_cases_of_one_run(tmp_path: Path) -> None:
    matrix = write_matrix(
        tmp_path / "m.yaml",
        """\
name: sharded
targets: [h100, mi300x]
kernels:
  vector_add:
    dtypes: [fp32, fp16]
    shapes: [{N: 4096}, {N: 1000}]
    configs:
      - {BLOCK: 1024, num_warps: 4}
""",
    )
    # the run after the shards takes their builds from the result cache, as a user's would (the answers are compared)
    reuse = {"HARNESS_RESULT_CACHE": "1", "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    listed = call_cli("list", str(matrix))
    everything = set(listed.stdout.split())
    night = tmp_path / "night"
    ran: list[str] = []
    for index in (1, 2, 3):
        out = night / f"shard{index}"
        proc = run_cli(
            "run", str(matrix), "--out", str(out), "-n", "0", "--static-only", "--shard", f"{index}/3", env=reuse
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        doc = json.loads((out / "results.json").read_text())
        assert doc["run"]["shard"] == {"index": index, "total": 3, "source": "--shard"}
        ran += sorted({r["case_id"] for r in doc["records"]})
    assert sorted(ran) == sorted(everything) and len(ran) == len(set(ran))
    bad = run_cli("run", str(matrix), "--out", str(tmp_path / "bad"), "--shard", "4/3")
    assert bad.returncode == 2 and "shard 4/3 does not exist" in bad.stderr and "Traceback" not in bad.stderr

    # the night's folder as one run, its report and CSV the same as one unsharded run's, byte for byte:
    # tests/test_smoke_matrix.py (the default matrix in 1, 3 and 7 shards)
    assert call_cli("report", str(night), "--out", str(tmp_path / "merged" / "report.md")).returncode == 0
    single = night  # the whole night is the other side of each comparison below

    # a missing shard, and the same shard's files twice, are named: the night cannot be compared
    shutil.copytree(night, tmp_path / "gap", ignore=shutil.ignore_patterns("shard2"))
    for cmd in (["compare", str(single), str(tmp_path / "gap")], ["report", str(tmp_path / "gap")]):
        gap = run_cli(*cmd)
        assert gap.returncode == 3 and "night incomplete: shard 2/3 missing" in gap.stderr, gap.stderr
    shutil.copytree(night, tmp_path / "twice")
    shutil.copytree(night / "shard1", tmp_path / "twice" / "shard1-copy")
    twice = call_cli("compare", str(single), str(tmp_path / "twice"))
    assert twice.returncode == 3 and "shard 1/3 given twice by the same run" in twice.stderr, twice.stderr
    # a shard narrowed by -k holds only part of its cases: named, the night cannot be compared
    shutil.copytree(night, tmp_path / "narrowed", ignore=shutil.ignore_patterns("shard3"))
    part = run_cli(
        "run",
        str(matrix),
        "--out",
        str(tmp_path / "narrowed" / "shard3"),
        "-n",
        "0",
        "--static-only",
        "--shard",
        "3/3",
        "-k",
        "h100",
        env=reuse,
    )  # fmt: skip  (a shard's units hold every target)
    assert part.returncode == 0, part.stdout[-2000:] + part.stderr[-2000:]
    cut = call_cli("compare", str(single), str(tmp_path / "narrowed"))
    assert cut.returncode == 3 and "shard 3/3" in cut.stderr and "ran only -k 'h100'" in cut.stderr, cut.stderr
    # a retried shard: its later attempt replaces the earlier one, and the night is whole
    shutil.copytree(night, tmp_path / "retried")
    again = tmp_path / "retried" / "shard2-retry"
    assert (
        run_cli(
            "run", str(matrix), "--out", str(again), "-n", "0", "--static-only", "--shard", "2/3", env=reuse
        ).returncode
        == 0
    )
    retried = call_cli("compare", str(single), str(tmp_path / "retried"))  # A/A: a retried shard changes nothing
    assert retried.returncode == 0 and "shard2-retry" in retried.stderr and "replaces" in retried.stderr, retried.stderr


def test_a_shard_without_cases_writes_an_empty_run(tmp_path: Path) -> None:
    """More shards than cases: the empty shard still writes its run (exit 0), so the night counts every shard."""
    matrix = write_matrix(
        tmp_path / "one.yaml",
        "name: one\ntargets: [h100]\nkernels:\n  vector_add:\n    dtypes: [fp32]\n    shapes: [{N: 4096}]\n"
        "    configs:\n      - {BLOCK: 1024, num_warps: 4}\n    interpret: false\n",
    )
    night = tmp_path / "night"
    for index in (1, 2):
        proc = run_cli("run", str(matrix), "--out", str(night / f"s{index}"), "-n", "0", "--static-only",
                       "--shard", f"{index}/2")  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert (night / f"s{index}" / "results.json").is_file()
    records = [json.loads((night / f"s{i}" / "results.json").read_text())["records"] for i in (1, 2)]
    assert sorted(len(r) for r in records) == [0, 1]
    assert call_cli("report", str(night)).returncode == 0
    # balanced on a stored run's case times instead of build counts: every shard given the same run
    costed = run_cli("run", str(matrix), "--out", str(tmp_path / "c"), "-n", "0", "--static-only", "--shard", "1/2",
                     "--shard-costs", str(night / "s1"))  # fmt: skip
    assert costed.returncode == 0, costed.stdout[-2000:] + costed.stderr[-2000:]
    alone = run_cli("run", str(matrix), "--out", str(tmp_path / "d"), "--shard-costs", str(night / "s1"))
    assert alone.returncode == 2 and "give --shard too" in alone.stderr


def test_shards_balance_on_a_stored_runs_case_times(tmp_path: Path) -> None:
    """--shard-costs RUN: the nightly on the H200 (run AF: cold compiles and GPU phases per case) as the costs; the
    largest of 4 shards by that run's measured seconds stays within 1.25x of the mean."""
    import gzip

    from harness.analysis import case_costs
    from harness.results.store import load_results

    (tmp_path / "af").mkdir()
    (tmp_path / "af" / "results.json").write_bytes(
        gzip.decompress((REPO / "tests" / "data" / "h200_nightly" / "results.json.gz").read_bytes())
    )
    _, records = load_results(tmp_path / "af")
    measured, per_build = case_costs.measured(records)
    assert measured and per_build
    cases = [c for c in expand(parse(REPO / "matrices" / "nightly.yaml"), "3.6.0") if c.target == "h200"]
    seconds = {c.id: measured.get(c.id) or shards.case_cost(len(c.configs), c.is_interpret) * per_build for c in cases}
    assert sum(1 for c in cases if c.id in measured) >= 50  # the run's own cases, measured
    got = shards.assign_cases(seconds, {c.id: c.shard_unit for c in cases}, 4)
    loads = [sum(seconds[c] for c, s in got.items() if s == shard) for shard in range(1, 5)]
    print(f"nightly h200 cases, 4 shards by run AF's seconds: {[round(x) for x in loads]}")
    assert max(loads) <= 1.25 * sum(loads) / 4


def test_a_nights_machine_kind_is_its_shards_one_kind_or_none() -> None:
    """Shards on runners of different CPUs give the night no single machine kind, so compile cost is not judged."""
    from harness.analysis.shard_coverage import combine
    from harness.model.run_info import RunInfo

    def shard(i: int, cpu: str) -> tuple[str, RunInfo, list]:
        info = {"shard": {"index": i, "total": 2}, "start": f"2026-12-02T0{i}:00:00+00:00", "cpu": cpu}
        return f"s{i}", RunInfo.from_json({**info, "end": info["start"]}), []

    assert combine([shard(1, "EPYC, 2 cores"), shard(2, "EPYC, 2 cores")]).run.cpu == "EPYC, 2 cores"
    mixed = combine([shard(1, "EPYC, 2 cores"), shard(2, "Xeon, 4 cores")]).run.cpu
    assert mixed == "several: EPYC, 2 cores; Xeon, 4 cores"
