"""TorchInductor's kernels captured per vendor (``harness compiled``), with real ``torch.compile`` and real Triton
compiles, under the h100 and mi300x faces: an activation chain at two shapes, softmax, a full reduction whose kernel
graph differs by vendor, mm + bias + gelu with and without max-autotune, and an ``nn.Module`` (an MLP block).

What the capture records is held against Inductor itself, never against a rule of the harness's: each recorded
kernel's source is imported in a child that wears only the target's face, and the configs Inductor's own heuristic
decorator then lists must be the recorded ones; the full reduction's split equals Inductor's
``InductorChoices.reduction_split_factor`` called under that face; every candidate is built with the compile
options Inductor's ``CachingAutotuner`` makes for it. A graph break, a hang and a crash are one line each, exit 2,
with the other entries kept.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers import DATA, call_cli, run_cli
from inductor_reference import reference_child as _reference_child

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(
    not torch.__version__.startswith("2.13"),
    reason=f"compiled capture is checked on torch 2.13 (here {torch.__version__})",
)

MODELS = DATA / "compiled" / "models.py"

#: the entries the GPU parity run takes too (benchmarks/compiled_parity.py)
GOOD = (DATA / "compiled" / "parity.yaml").read_text().split("compiled:\n", 1)[1]

BAD = """\
  breaks:
    fn: models.py:breaks
    inputs: models.py:one_input
    shapes: [{M: 64, N: 64}]
    dtypes: [fp32]
  hangs:
    fn: models.py:activation
    inputs: models.py:hangs_inputs
    shapes: [{M: 64, N: 64}]
    dtypes: [fp32]
  crashes:
    fn: models.py:activation
    inputs: models.py:crashes_inputs
    shapes: [{M: 64, N: 64}]
    dtypes: [fp32]
  planted:
    fn: models.py:logsumexp
    inputs: models.py:planted_pass_failure_inputs
    shapes: [{M: 64, N: 64}]
    dtypes: [fp32]
"""


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, subprocess.CompletedProcess[str], Path]:
    root = tmp_path_factory.mktemp("compiled")
    (root / "models.py").write_text(MODELS.read_text())
    # the bad entries in the middle: the good ones after them still get a child of their own
    body = GOOD.split("  sum:")[0] + BAD + "  sum:" + GOOD.split("  sum:")[1]
    (root / "m.yaml").write_text("name: inductor\ntargets: [h100, mi300x]\ncompiled:\n" + body)
    (root / "tmp").mkdir()  # the command's temporary folder: what its children leave there is seen below
    env = {"HARNESS_CALLBACK_TIMEOUT_S": "8", "TMPDIR": str(root / "tmp")}
    proc = run_cli("compiled", str(root / "m.yaml"), "--out", str(root / "out"), env=env)
    return json.loads((root / "out" / "compiled.json").read_text()), proc, root


def test_a_graph_break_a_hang_and_a_crash_are_one_line_each_and_the_rest_is_kept(captured) -> None:
    doc, proc, root = captured
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    said = [ln for ln in proc.stderr.splitlines() if ln.startswith("harness:")]
    assert "Traceback" not in proc.stderr
    for target in ("h100", "mi300x"):
        mine = [ln for ln in said if f" on {target}" in ln]
        assert any("breaks" in ln and "graph break" in ln for ln in mine), said
        assert any("hangs" in ln and "did not return within 8 s" in ln for ln in mine), said
        assert any("crashes" in ln and "exit code 7" in ln for ln in mine), said
        # an Inductor pass that fails: its own exception on the line, not Dynamo's "backend='inductor' raised:"
        planted = [ln for ln in mine if "compiled entry planted" in ln]
        assert len(planted) == 1 and "ValueError: a pass failed here (planted)" in planted[0], said
        kept = Path(planted[0].split("(traceback: ")[1].rstrip(")"))
        assert kept.parent == root / "out" / "tracebacks" and "constant_fold_uniform_value" in kept.read_text()
        for name in ("act", "softmax", "sum", "mm", "mm_autotuned", "mlp"):
            rows = doc["entries"][name][target]["tables"]
            assert rows and all(isinstance(r["table"], dict) for r in rows), (name, target)


def test_the_capture_leaves_nothing_in_the_temporary_folder(captured) -> None:
    """Inductor's cache under each face, and whatever the user's code writes there, goes with the child that made
    it, the hung and crashed ones too: a nightly host's ``/tmp`` does not grow by a folder per face per night. What
    may stay is Inductor's own default cache (``torchinductor_<user>``), where the build stage's compiles with
    Inductor's options land as a user's ``torch.compile`` would: shared by every run, keyed by kernel."""
    _, proc, root = captured
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    left = sorted(p.name for p in (root / "tmp").iterdir() if not re.fullmatch(r"torchinductor_\w+", p.name))
    assert left == []


@pytest.mark.parametrize("target", ["h100", "mi300x"])
def test_recorded_kernels_and_configs_are_what_inductor_lists_under_that_face(captured, target: str) -> None:
    doc, _, root = captured
    kernels = []
    for name in ("act", "softmax", "sum", "mm", "mm_autotuned", "mlp"):
        for row in doc["entries"][name][target]["tables"]:
            kernels += row["table"]["kernels"]
    assert len({k["name"] for k in kernels}) >= 8
    reference = _reference_child(target, kernels, root)
    for i, k in enumerate(kernels):
        assert k["configs"] == reference["configs"][f"{i}:{k['name']}"], (target, k["name"])
        assert k["launches"], k["name"]  # the compiled wrapper launched it, with a grid per config
        assert all(len(la["grids"]) == len(k["configs"]) for la in k["launches"])
    # the full reduction: its first kernel splits the 8192^2 elements by the factor Inductor's split heuristic
    # gives under this face (h100 512 partial sums; mi300x 607, each split again in two: 1214)
    (first, *_rest) = doc["entries"]["sum"][target]["tables"][0]["table"]["kernels"]
    xnumel = first["launches"][0]["args"]["xnumel"]
    assert xnumel % reference["split"] == 0 and xnumel // reference["split"] in (1, 2), (xnumel, reference["split"])


def test_the_kernel_graph_and_configs_differ_by_vendor_where_inductor_adapts(captured) -> None:
    doc, proc, root = captured

    def table(name: str, target: str, i: int = 0) -> dict:
        return doc["entries"][name][target]["tables"][i]["table"]

    # a full reduction: h100 splits once (2 kernels), mi300x's 304 CUs and 64-wide waves split twice (3)
    assert [len(table("sum", t)["kernels"]) for t in ("h100", "mi300x")] == [2, 3]
    # the same pointwise kernel: Inductor lists 3 more configs on HIP, with waves_per_eu on two
    h100, mi300x = table("act", "h100")["kernels"][0], table("act", "mi300x")["kernels"][0]
    assert h100["name"] == mi300x["name"] and (len(h100["configs"]), len(mi300x["configs"])) == (2, 5)
    assert sum("waves_per_eu" in c for c in mi300x["configs"]) == 2 and not any(
        "waves_per_eu" in c for c in h100["configs"]
    )
    assert h100["triton_meta"]["device"]["type"] == "cuda" and mi300x["triton_meta"]["device"]["type"] == "hip"
    # max-autotune: every template choice listed, a Triton template chosen by the stated policy (no timing)
    for target in ("h100", "mi300x"):
        tuned = table("mm_autotuned", target)
        assert tuned["choices"] and len(tuned["choices"][0]["choices"]) > 10
        assert tuned["kernels"][0]["heuristic"] == "template" and "max_autotune_choice" in tuned["policies"]
        assert table("mm", target)["kernels"][0]["heuristic"] == "pointwise"  # extern mm + the epilogue
    md = (root / "out" / "compiled.md").read_text()
    assert "sum M8192xN8192 bf16" in md and "kernels: h100 2, mi300x 3" in md
    assert "differs: kernels: h100 2, mi300x 3" in proc.stdout
    page = (root / "out" / "compiled.html").read_text()
    assert "<h2>sum · M8192xN8192 · bf16</h2>" in page and "differs: kernels: h100 2, mi300x 3" in page
    assert "reduction&#39;s configs" in page  # Inductor's and the policies' words are escaped, never markup


def test_each_candidate_is_built_with_the_options_inductor_gives_it(captured) -> None:
    doc, _, root = captured
    for target, backend in (("h100", "cubin"), ("mi300x", "hsaco")):
        builds = [b for row in doc["entries"]["act"][target]["tables"] for b in row["builds"]]
        assert builds and all(not b["error"] for b in builds)
        assert all((root / "out" / "artifacts" / b["artifacts"][backend]).is_file() for b in builds)
        for b in builds:
            # what Inductor's _create_compile_options gives: debug on NVIDIA only, waves_per_eu a backend option
            assert b["options"]["debug"] is (target == "h100") and b["options"]["sanitize_overflow"] is False
            assert b["options"].get("waves_per_eu") == b["config"].get("waves_per_eu")
            assert b["resources"]["registers"] > 0
            # read by the one reader every build uses (compile.binary_resources): Blackwell's tensor memory too,
            # which the compiled builds' own copy of it left out (never checked against tmem_columns)
            assert ("tmem_columns" in b["resources"]) is (backend == "cubin")


def test_a_torch_bump_compared_kernel_for_kernel(captured) -> None:
    """The same entries captured on an H100 under torch 2.11 (stored: tests/data/compiled/torch211-h100, the parity
    run of docs/performance.md) against this torch 2.13 capture: what a team reads before bumping torch."""
    _, _, root = captured
    proc = call_cli("compare", str(DATA / "compiled" / "torch211-h100"), str(root / "out"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]  # nothing that fit stopped fitting
    said = proc.stdout
    assert said.startswith("compiled entries: torch 2.11.0 -> 2.13"), said[:200]
    # 2.13 fuses softmax's exp and sub into its online kernel under another name; the layer norm's loads changed
    assert "softmax h100 M8192xN8192 bf16: triton_red_fused__softmax_exp_prepare_softmax_online_sub_0 removed" in said
    assert "softmax h100 M8192xN8192 bf16: triton_red_fused__softmax_prepare_softmax_online_0 added" in said
    assert "mlp h100 T512xD1024 bf16: triton_per_fused_native_layer_norm_0 changed" in said
    assert "evict_first" in said
    # the targets and entries only this run asks for are listed, not judged
    assert "only in new: act mi300x M8192xN8192 bf16" in said and "only in new: breaks h100" in said


@pytest.mark.parametrize(
    ("module", "said"),
    [
        ("import os\nos._exit(3)\n", "the compile ended its process (exit code 3)"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "the compile ended its process (SIGSEGV)"),
        ("while True:\n    pass\n", "did not finish within 3 s"),
    ],
)
def test_a_build_that_crashes_or_hangs_is_its_own_one_line_error(tmp_path, monkeypatch, module: str, said: str) -> None:
    """Each candidate is built in a forked child of its own (plumbing: a stand-in for Inductor's module that ends or
    hangs its process the way a crashing compiler would)."""
    from harness.compiling.compiled_build import isolated
    from harness.model import targets

    monkeypatch.setenv("HARNESS_BUILD_TIMEOUT_S", "3")
    made = isolated(module, "k", {"XBLOCK": 1, "num_warps": 4, "num_stages": 1}, targets.get("h100"), tmp_path)
    assert made.error == said and not made.fits


@pytest.fixture(scope="module")
def ran(captured) -> tuple[list[dict], subprocess.CompletedProcess[str], Path]:
    """The same act and sum entries as a ``compiled:`` section of a run matrix, run by ``harness run``."""
    _, _, root = captured
    entries = (
        "  act:" + GOOD.split("  act:")[1].split("  softmax:")[0] + "  sum:" + GOOD.split("  sum:")[1].split("  mm:")[0]
    )
    (root / "run.yaml").write_text("name: inductor-run\ntargets: [h100, mi300x]\ncompiled:\n" + entries)
    proc = run_cli("run", str(root / "run.yaml"), "--out", str(root / "run"), "-n", "2")
    records = [json.loads(line) for line in (root / "run" / "records.jsonl").read_text().splitlines() if line]
    return records, proc, root


def test_a_run_matrix_builds_every_kernel_inductor_generates_as_harness_compiled_does(captured, ran) -> None:
    """Each compiled kernel is a run's case per target, shape and dtype where it is part of that target's graph: the
    run's records hold the kernel graph and configs ``harness compiled`` captured (held against Inductor above) and
    the very binaries it built with Inductor's options (their code; the source-line table names each command's
    own copy of the module), read by the same tools."""
    from harness.compiling.cubin_sections import code_digest
    from harness.model.inductor_policies import POLICIES

    doc, _, root = captured
    records, proc, _ = ran
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert records and all(r["inductor"]["entry"] in ("act", "sum") for r in records)
    assert all(r["inductor"]["policies"] == list(POLICIES) and r["status"] == "ok" for r in records)
    for entry in ("act", "sum"):
        for target, binary in (("h100", "cubin"), ("mi300x", "hsaco")):
            for row in doc["entries"][entry][target]["tables"]:
                mine = [r for r in records if r["inductor"]["entry"] == entry and r["target"] == target
                        and r["shape"] == row["shape"] and r["dtype"] == row["dtype"]]  # fmt: skip
                graph = [k["name"] for k in row["table"]["kernels"]]
                assert {tuple(r["inductor"]["graph"]) for r in mine} == {tuple(graph)}, (entry, target)
                built = {(r["inductor"]["kernel"], json.dumps(r["config"], sort_keys=True)): r for r in mine}
                listed = {
                    (k["name"], json.dumps(c, sort_keys=True)) for k in row["table"]["kernels"] for c in k["configs"]
                }
                assert set(built) == listed, (entry, target, row["shape"])
                for b in row["builds"]:
                    record = built[(b["kernel"], json.dumps(b["config"], sort_keys=True))]
                    # the same code, the source-line table aside: it names the module file's path, which differs
                    # between the two commands' folders (and a Triton cache hit may carry either)
                    theirs = code_digest((root / "out" / "artifacts" / b["artifacts"][binary]).read_bytes())
                    assert record["artifacts"][binary]["code_sha256"] == theirs, (entry, target, b["config"])
                    assert record["resources"]["registers"] == b["resources"]["registers"]
                    assert record["resources"]["shared"] == b["resources"]["shared"]
                    assert record["inductor"]["options"] == b["options"]


def test_a_run_reports_where_inductor_adapts_from_its_records(ran, tmp_path) -> None:
    _, proc, root = ran
    assert "compiled functions (each target's Inductor kernel graph in report.md):" in proc.stdout
    assert "sum M8192xN8192 bf16: h100 2 kernel(s); mi300x 3 kernel(s)" in proc.stdout
    md = (root / "run" / "report.md").read_text()
    assert "## Compiled functions: where Inductor adapts" in md and "### sum M8192xN8192 bf16" in md
    assert "- differs: kernels: h100 2, mi300x 3" in md and "- max_autotune_choice: " in md
    assert "<h3>sum · M8192xN8192 · bf16</h3>" in (root / "run" / "report.html").read_text()
    # the section comes from the records alone: a report re-rendered (or merged) from the run directory has it
    again = call_cli("report", str(root / "run"), "--out", str(tmp_path / "again.md"))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "- differs: kernels: h100 2, mi300x 3" in (tmp_path / "again.md").read_text()
    # cases are selected by id like any other (the same selection `harness run -k` makes): the sum's kernels only
    some = call_cli("list", str(root / "run.yaml"), "-k", "sum.")
    assert some.returncode == 0, some.stdout[-2000:] + some.stderr[-2000:]
    ids = [ln for ln in some.stdout.splitlines() if "[" in ln]
    assert len(ids) == 5 and all(i.startswith("sum.triton_") for i in ids), ids  # h100 2 kernels, mi300x 3


def test_two_runs_under_different_torch_pins_compare_kernel_for_kernel(ran) -> None:
    """A run of tests/data/compiled/run.yaml on an H100 under torch 2.11 (stored with the modules Inductor wrote: the
    run of docs/performance.md, "Compiled entries in a run on the GPU") against this suite's torch 2.13 run: the
    records' comparison, then the kernels Inductor rewrote, as a team reads them before a torch bump."""
    _, _, root = ran
    proc = call_cli("compare", str(DATA / "compiled" / "run-torch211-h100"), str(root / "run"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    said = proc.stdout
    assert "compiled entries: torch 2.11.0 -> 2.13" in said, said[-3000:]
    # 2.13 adds evict_first to the sum's persistent load: the source diff says so, and the binary changed
    assert "sum h100 M8192xN8192 bf16: triton_per_fused__to_copy_pow_sum_1 changed" in said
    assert "eviction_policy='evict_first'" in said and "changed binary" in said
    assert "only in new: sum mi300x M8192xN8192 bf16" in said


def test_the_inductor_internals_a_gpu_worker_holds_exist_on_this_torch(captured, tmp_path) -> None:
    """What harness/intake/inductor_spec.py reads and patches on a GPU worker, held against this torch's Inductor
    (it ran on an H100 with torch 2.11, docs/performance.md run CF): a release that moves one of these fails here."""
    import inspect

    import torch._inductor.config as config
    from torch._inductor.runtime.cache_dir_utils import triton_cache_dir
    from torch._inductor.runtime.runtime_utils import triton_hash_to_path_key
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    from harness.compiling.compiled_build import load_autotuner

    for name in ("compile_threads", "force_disable_caches", "benchmark_epilogue_fusion", "shape_padding",
                 "use_static_cuda_launcher"):  # fmt: skip
        assert hasattr(config, name), name
    assert "stream" in inspect.signature(CachingAutotuner.run).parameters
    assert callable(CachingAutotuner.precompile) and callable(triton_cache_dir)
    assert triton_hash_to_path_key("ab" * 32)  # Triton's hex key to its cache folder's name
    doc, _, _ = captured
    kernel = doc["entries"]["act"]["h100"]["tables"][0]["table"]["kernels"][0]
    auto = load_autotuner(kernel["source"], kernel["name"], tmp_path)
    assert isinstance(auto, CachingAutotuner) and auto.launchers == []  # nothing compiled before its first run
    assert auto.inductor_meta["kernel_name"] == kernel["name"] and "device" in auto.triton_meta
    assert hasattr(auto, "_cached_launcher")  # torch 2.13's fast path, reset when a launcher is held


def test_a_run_whose_capture_failed_keeps_the_traceback_and_its_folder_takes_the_rerun(tmp_path) -> None:
    """``harness run``: a compiled entry whose capture fails is one line naming the cause and the traceback kept in
    the run directory; once the entry is mended, the same ``--out`` is the rerun's (the kept traceback is the
    harness's own, not a foreign file)."""
    (tmp_path / "models.py").write_text(MODELS.read_text())
    matrix = tmp_path / "m.yaml"
    entry = "  lse:\n    fn: models.py:logsumexp\n    inputs: models.py:{}\n    shapes: [{{M: 64, N: 64}}]\n    dtypes: [fp32]\n"
    matrix.write_text("name: m\ntargets: [h100]\ncompiled:\n" + entry.format("planted_pass_failure_inputs"))
    failed = run_cli("run", str(matrix), "--out", str(tmp_path / "out"), "-n", "0")
    assert failed.returncode == 2 and "ValueError: a pass failed here (planted)" in failed.stderr, failed.stderr
    kept = tmp_path / "out" / "tracebacks" / "lse-h100-M64xN64-fp32.txt"
    assert str(kept) in failed.stderr and "Traceback" in kept.read_text()
    matrix.write_text("name: m\ntargets: [h100]\ncompiled:\n" + entry.format("one_input"))
    mended = run_cli("run", str(matrix), "--out", str(tmp_path / "out"), "-n", "0")
    assert mended.returncode == 0, mended.stdout[-2000:] + mended.stderr[-2000:]
