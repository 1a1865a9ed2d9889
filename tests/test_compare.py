"""``harness compare``: statistics on known distributions, static and timing changes on real records, exit codes."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
from helpers import DATA, call_cli, run_cli, write_matrix

from harness.analysis.compare import compare_runs, compile_time, stats
from harness.model.records import Record
from harness.model.runtime import Timing
from harness.results.store import load_results

DEVICE_RUN = DATA / "h200_run_m"  # matmul 1024^3 from run M on the H200 (docs/performance.md): real samples


def _normal(seed: int, n: int, mean: float, sd: float) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(mean, sd) for _ in range(n)]


def _est(value: float, spread: float = 0.002, n: int = 50) -> stats.Estimate:
    return stats.Estimate(value, spread, n)


def test_statistics_on_known_figures() -> None:
    """Judged against the between-run floor, not the within-run spread; asv's guard; the reason is given."""
    family = [
        (_est(100), _est(120), 0.05, None),
        (_est(100), _est(103), 0.05, None),
        (_est(100), _est(90), 0.05, None),
        (_est(100), _est(300, n=3), 0.05, None),
    ]
    slower, same, faster, few = stats.judge_family(family)
    assert slower.verdict == "slower" and slower.sigma == stats.NOISE_FLOOR and slower.noise_source == "floor"
    assert same.verdict == "same" and faster.verdict == "faster" and not faster.worse
    assert few.verdict == "not judged" and few.p_value is None and "fewer than 5" in few.reason
    # a 6% shift, one figure: called; the same shift among 99 unchanged figures: not discovered (family control)
    assert stats.judge_family([(_est(100), _est(106), 0.05, None)])[0].verdict == "slower"
    crowd = [(_est(100), _est(100 * (1 + 0.01 * ((i % 7) - 3) / 3)), 0.05, None) for i in range(99)]
    assert stats.judge_family(crowd + [(_est(100), _est(106), 0.05, None)])[-1].verdict == "noise"
    # a noisy figure is judged against its own spread where that is the larger; history replaces the floor
    noisy = stats.judge_family([(_est(100, 0.05), _est(112, 0.05), 0.05, None)])[0]
    assert noisy.noise_source == "within-run spread" and noisy.verdict == "noise"
    quiet = stats.judge_family([(_est(100), _est(106), 0.05, 0.005)])[0]
    assert quiet.noise_source == "history" and quiet.sigma == 0.005
    assert stats.history_sigma([100.0, 101.0, 99.0, 100.5]) is None  # four nights: too few
    assert 0.005 < stats.history_sigma([100.0, 101.0, 99.0, 100.5, 99.5]) < 0.02


def _device_records() -> list[Record]:
    _, records = load_results(DEVICE_RUN)
    return records


def _final(records: list[Record]) -> list[Record]:
    return [r for r in records if r.mode == "compile" and r.runtime is not None and r.runtime.stage == "final"]


def _retimed(records: list[Record], rec: Record, timing: Timing) -> list[Record]:
    """The records with ``rec`` given another timing (a new record in its place)."""
    new = dataclasses.replace(rec, runtime=rec.runtime.updated(timing=timing))
    return [new if r is rec else r for r in records]


def test_a_a_on_recorded_device_samples_is_no_change() -> None:
    sides = []
    # the same 200 samples split in two: alternate whole rotations of the input buffers (sample i reads copy
    # i % rotated_buffers, and the copies are not equally fast: odd/even samples differ by 5%, p < 1e-14)
    for half in (0, 1):
        side = _device_records()
        for r in _final(side):
            timing = r.runtime.timing
            period = int(timing.rotated_buffers or 1)
            half_samples = tuple(x for i, x in enumerate(timing.samples_us) if (i // period) % 2 == half)
            side = _retimed(side, r, timing.updated(samples_us=half_samples))
        sides.append(side)
    base, new = sides
    cmp = compare_runs(base, new, min_us=0)
    assert cmp.timings_judged == 2 and cmp.exit_code == 0, [c for c in cmp.changes if c.kind == "timing"]


def test_a_kernel_threshold_from_the_matrix_overrides_the_default() -> None:
    base, new = _device_records(), _device_records()
    fast, slow = sorted(_final(new), key=lambda r: r.runtime.timing.median_us)
    ratio = slow.runtime.timing.median_us / fast.runtime.timing.median_us
    new = _retimed(new, fast, slow.runtime.timing)
    loose = {"matmul": ratio - 1 + 0.02}  # this kernel tolerates a change a little larger than the one made
    assert compare_runs(base, new, min_us=0, thresholds=loose).exit_code == 0
    assert compare_runs(base, new, min_us=0, thresholds={"softmax": ratio - 1 + 0.02}).exit_code == 1


def test_a_config_made_slower_is_a_regression() -> None:
    base, new = _device_records(), _device_records()
    fast, slow = sorted(_final(new), key=lambda r: r.runtime.timing.median_us)
    assert slow.runtime.timing.median_us > 1.1 * fast.runtime.timing.median_us
    new = _retimed(new, fast, slow.runtime.timing)  # the slower config's real samples
    cmp = compare_runs(base, new, min_us=0)
    worse = [c for c in cmp.changes if c.worse]
    assert cmp.exit_code == 1 and [c.kind for c in worse] == ["timing"] and fast.config_id in worse[0].label


@pytest.fixture(scope="module")
def static_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("cmp")
    matrix = write_matrix(
        tmp / "m.yaml",
        """\
name: cmp
targets: [h100, mi300x]
kernels:
  matmul:
    dtypes: [fp16]
    shapes: [{M: 256, N: 256, K: 256}]
    configs:
      - {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, GROUP_M: 8, num_warps: 4, num_stages: 2}
      - {BLOCK_M: 128, BLOCK_N: 256, BLOCK_K: 64, GROUP_M: 8, num_warps: 8, num_stages: 3}
    interpret: false
""",
    )
    out = tmp / "run"
    proc = run_cli(
        "run",
        str(matrix),
        "--out",
        str(out),
        "-n",
        "0",
        "--static-only",
        env={"TRITON_CACHE_DIR": str(tmp / "triton-cache")},
    )  # cold: every build compiled from source
    assert proc.returncode == 0, proc.stdout[-2000:]
    return out


def _variant(src: Path, dst: Path, change) -> Path:
    doc = json.loads((src / "results.json").read_text())
    change(doc)
    dst.mkdir()
    (dst / "results.json").write_text(json.dumps(doc))
    return dst


def _small(doc: dict) -> dict:
    return next(
        r
        for r in doc["records"]
        if r["target"] == "h100" and r["config"]["BLOCK_M"] == 64 and r["environment"] == "default"
    )


def test_exit_codes_on_real_static_records(static_run: Path, tmp_path: Path) -> None:
    same = call_cli("compare", str(static_run), str(static_run))
    assert same.returncode == 0 and "no change among the" in same.stdout and "kernels: none added" in same.stdout

    def exceeds(doc: dict) -> None:
        rec = _small(doc)
        rec["flags"] = [{"resource": "shared", "value": 300000, "limit": 232448, "severity": "error"}]
        rec["fits"] = False

    worse = call_cli(
        "compare",
        str(static_run),
        str(_variant(static_run, tmp_path / "exceeds", exceeds)),
        "--json",
        str(tmp_path / "diff.json"),
        "--markdown",
        str(tmp_path / "diff.md"),
    )
    assert worse.returncode == 2 and "WORSE: verdict h100" in worse.stdout and "fits -> exceeds" in worse.stdout
    first = worse.stdout.splitlines()[:4]  # what changed, first: the new finding named, then the verdict
    assert first[2].startswith("new findings: 1 exceeds (") and "h100" in first[2], first
    assert first[3].startswith("exit 2: worse"), first
    diff = json.loads((tmp_path / "diff.json").read_text())
    assert diff["exit_code"] == 2 and any(c["kind"] == "verdict" and c["worse"] for c in diff["changes"])
    assert "| verdict" in (tmp_path / "diff.md").read_text()

    def fails(doc: dict) -> None:
        rec = _small(doc)
        rec["status"], rec["error"] = "error", "RuntimeError: PassManager::run failed"

    failed = call_cli("compare", str(static_run), str(_variant(static_run, tmp_path / "fails", fails)))
    assert failed.returncode == 2 and "WORSE: status compile" in failed.stdout

    def more_registers(doc: dict) -> None:
        _small(doc)["resources"]["registers"] += 8

    info = call_cli("compare", str(static_run), str(_variant(static_run, tmp_path / "regs", more_registers)))
    assert info.returncode == 0 and "resource: 1" in info.stdout  # a resource delta is shown, not a failure

    def schema(doc: dict) -> None:
        doc["schema_version"] = 99

    bad = call_cli("compare", str(static_run), str(_variant(static_run, tmp_path / "schema", schema)))
    assert bad.returncode == 3 and "schema_version 99" in bad.stderr

    def disjoint(doc: dict) -> None:
        for r in doc["records"]:
            r["kernel"] = "other"

    apart = call_cli("compare", str(static_run), str(_variant(static_run, tmp_path / "disjoint", disjoint)))
    assert apart.returncode == 3 and "no record of one run matches" in apart.stdout


def _build(i: int, stages: dict[str, float], cache: str = "miss") -> Record:
    return Record(
        kernel="k",
        dtype="fp16",
        shape={"N": i},
        target="h100",
        arch="sm_90",
        vendor="nvidia",
        triton="x",
        config={"B": i},
        config_id=f"B{i}",
        meta={},
        origin="nvidia",
        mode="compile",
        status="ok",
        compile_s=sum(stages.values()) + 0.3,
        compile_cache=cache,
        compile_stages_s=stages,
    )


def _stages(rng: random.Random, scale: dict[str, float] | None = None) -> dict[str, float]:
    base = {"ttir": 0.003, "ttgir": 0.01, "llir": 0.015, "ptx": 0.008, "cubin": 0.05}
    return {k: v * (scale or {}).get(k, 1.0) * rng.lognormvariate(0, 0.15) for k, v in base.items()}


def test_compile_time_judged_like_with_like_on_known_distributions() -> None:
    rng = random.Random(7)
    same = compile_time.judge([(_build(i, _stages(rng)), _build(i, _stages(rng))) for i in range(40)])
    assert same.verdict in ("same", "noise") and not same.worse and same.pairs == 40
    slower = compile_time.judge([(_build(i, _stages(rng)), _build(i, _stages(rng, {"cubin": 2.5}))) for i in range(40)])
    assert slower.verdict == "slower" and slower.p_value < 1e-9 and 1.6 < slower.ratio < 2.4
    assert max(slower.stages, key=slower.stages.get) == "cubin" and "most in cubin" in slower.line()
    few = compile_time.judge([(_build(i, _stages(rng)), _build(i, _stages(rng, {"cubin": 3}))) for i in range(6)])
    assert few.verdict == "not judged" and "6 config(s)" in few.reason and not few.worse
    warm = compile_time.judge([(_build(i, _stages(rng)), _build(i, {}, "hit")) for i in range(40)])
    assert warm.verdict == "not judged" and "warm" in warm.reason and warm.builds["warm"] == (0, 40)
    # exact binomial: 10 of 10 one way is p = 2 / 2**10
    assert compile_time.sign_test_p(10, 0) == 2 / 1024 and compile_time.sign_test_p(5, 5) == 1.0
    # a judged slower compile is a performance regression: exit 1
    cmp = compare_runs(
        [_build(i, _stages(rng)) for i in range(30)], [_build(i, _stages(rng, {"llir": 6.0})) for i in range(30)]
    )
    assert cmp.compile_time.worse and cmp.exit_code == 1
    # CPU time, where the records have it, is the figure; two machine kinds are never compared
    with_cpu = [(dataclasses.replace(a, compile_cpu_s=1.0), dataclasses.replace(b, compile_cpu_s=2.0)) for a, b in
                ((_build(i, _stages(rng)), _build(i, _stages(rng))) for i in range(20))]  # fmt: skip
    judged = compile_time.judge(with_cpu)
    assert judged.verdict == "slower" and judged.measure == compile_time.CPU and "CPU time" in judged.line()
    apart = compile_time.judge(with_cpu, machines=("EPYC, 2 cores", "Xeon, 16 cores"))
    assert apart.verdict == "not judged" and "different machines" in apart.reason and not apart.worse


def test_a_warm_rerun_is_not_judged_for_compile_time(static_run: Path, tmp_path: Path) -> None:
    """Triton's own listener says each build of a rerun came from its cache: compile time is then not judged."""
    doc = json.loads((static_run / "results.json").read_text())
    assert {r["compile_cache"] for r in doc["records"]} == {"miss"}
    assert all(r["compile_stages_s"].get("llir", 0) > 0 for r in doc["records"])
    rerun = tmp_path / "rerun"
    proc = run_cli(
        "run",
        str(Path(doc["run"]["matrix"]["path"])),
        "--out",
        str(rerun),
        "-n",
        "0",
        "--static-only",
        env={"TRITON_CACHE_DIR": str(static_run.parent / "triton-cache")},
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    again = json.loads((rerun / "results.json").read_text())["records"]
    assert {r["compile_cache"] for r in again} == {"hit"}
    out = call_cli("compare", str(static_run), str(rerun))
    assert out.returncode == 0 and "cold 4 -> 0, warm 0 -> 4" in out.stdout and "not judged" in out.stdout, out.stdout


def test_a_fresh_checkout_rebuilding_the_same_code_is_no_changed_binary(tmp_path: Path) -> None:
    """Two nights from two checkouts at two paths (another runner's build folder), cold caches each: ptxas writes
    the kernel file's modification time into the cubin's line table, the hsaco's debug strings name the folder it
    was built in, so the two nights' binaries differ byte for byte, on both vendors. The compare gate matches them
    by their code (``code_sha256``), not their bytes: no "changed binary" for an unchanged kernel."""
    import os
    import shutil

    matrix_text = (
        "name: checkout\ntargets: [h100, mi300x]\nkernels:\n  poly:\n    source: noinline_kernel.py:SPEC\n"
        "    dtypes: [fp32]\n    shapes: [{N: 4096}]\n    configs: [{BLOCK: 1024, num_warps: 4}]\n    interpret: false\n"
    )
    for night, checkout in (("one", "src"), ("two", "builds-runner-2/src")):
        source = tmp_path / checkout / "noinline_kernel.py"
        source.parent.mkdir(parents=True)
        shutil.copy(DATA / "noinline_kernel.py", source)
        os.utime(source, (source.stat().st_atime, source.stat().st_mtime - 86400 * len(checkout)))  # another day
        matrix = write_matrix(tmp_path / checkout / "m.yaml", matrix_text)
        caches = {
            "TRITON_CACHE_DIR": str(tmp_path / night / "triton"),
            "HARNESS_CACHE_DIR": str(tmp_path / night / "h"),
        }
        proc = run_cli(
            "run", str(matrix), "--out", str(tmp_path / night / "run"), "-n", "0", "--static-only", env=caches
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    for target, kind in (("h100", "cubin"), ("mi300x", "hsaco")):
        binaries = [
            next(r for r in json.loads((tmp_path / night / "run" / "results.json").read_text())["records"]
                 if r["target"] == target)["artifacts"][kind]
            for night in ("one", "two")
        ]  # fmt: skip
        assert binaries[0]["sha256"] != binaries[1]["sha256"], kind  # the debug information differs
        assert binaries[0]["code_sha256"] == binaries[1]["code_sha256"] is not None, kind
    proc = call_cli("compare", str(tmp_path / "one" / "run"), str(tmp_path / "two" / "run"),
                   "--json", str(tmp_path / "compare.json"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    changes = json.loads((tmp_path / "compare.json").read_text())["changes"]
    assert not [c for c in changes if c["kind"] == "code"], changes
