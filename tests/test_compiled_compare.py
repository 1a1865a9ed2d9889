"""``harness compare`` of two runs with compiled entries (``harness compiled`` makes such runs): per entry, target,
shape and dtype, the kernels added, removed and changed (source diff, configs), and what got worse; the question
before a torch bump.

The first test compares two real captures whose Inductor kernels differ in their source (a model's constant
changed; two torch pins differ the same way, in more places); the rest are the decision's plumbing on small
hand-made graphs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import DATA, call_cli, run_cli

from harness.analysis.compiled_compare import GraphKernel, KernelGraph, Key, Verdict, compare

torch = pytest.importorskip("torch")


def _capture(root: Path, fn: str, shape: str = "{M: 1024, N: 4096}") -> Path:
    shutil.copy(DATA / "compiled" / "models.py", root / "models.py")
    (root / "c.yaml").write_text(
        f"name: c\ntargets: [h100]\ncompiled:\n  act:\n    fn: models.py:{fn}\n    inputs: models.py:act_inputs\n"
        f"    shapes: [{shape}]\n    dtypes: [bf16]\n"
    )
    # what is compared is the kernels, not their checks (tests/test_real_shape_checks.py checks them)
    proc = run_cli("compiled", str(root / "c.yaml"), "--out", str(root / "out"), "-n", "0",
                   env={"HARNESS_CHECK_BUDGET_S": "0"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root / "out"


@pytest.mark.skipif(not torch.__version__.startswith("2.13"), reason="compiled capture is checked on torch 2.13")
def test_two_captures_compare_kernel_for_kernel_with_the_source_diff(tmp_path: Path) -> None:
    from harness.results.store import load_results

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    base, new = _capture(tmp_path / "a", "activation"), _capture(tmp_path / "b", "activation_quarter")
    same = call_cli("compare", str(base), str(base))
    assert same.returncode == 0 and "no kernel added, removed or changed" in same.stdout, same.stdout + same.stderr
    proc = call_cli("compare", str(base), str(new))
    assert proc.returncode == 0, proc.stdout + proc.stderr  # a changed kernel is news, not worse
    _, records = load_results(base / "results.json")
    name = records[0].inductor.kernel
    assert f"act h100 M1024xN4096 bf16: {name} changed" in proc.stdout, proc.stdout
    assert "source: +" in proc.stdout and "0.25" in proc.stdout, proc.stdout
    # the same function rerun at another shape: its graph matched kernel for kernel, the sizes set aside
    (tmp_path / "c").mkdir()
    other = _capture(tmp_path / "c", "activation", "{M: 512, N: 2048}")
    moved = call_cli("compare", str(base), str(other))
    assert "matched at another shape: act h100 M1024xN4096 bf16 -> M512xN2048" in moved.stdout, moved.stdout
    # the records agree: left to the graph's comparison, said once, never refused as "no record matches"
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "rerun at another shape: act h100 M1024xN4096 -> M512xN2048 bf16" in moved.stdout, moved.stdout
    assert "0 only in base, 0 only in new" in moved.stdout, moved.stdout
    said = moved.stdout.split("compiled entries:")[1]
    assert "no kernel added, removed or changed" in said and "only in" not in said, said


@pytest.mark.skipif(not torch.__version__.startswith("2.13"), reason="compiled capture is checked on torch 2.13")
def test_default_against_max_autotune_says_the_mode_and_the_new_spills_first(tmp_path: Path) -> None:
    """One function captured for MI300X as ``torch.compile`` makes it by default and under ``mode: max-autotune``:
    the compare's first lines name the mode change, the kernels that came and went, and the config that spills now
    (the mm template at 1 warp: the AMD compiler's own spill count), then the verdict."""
    runs = {}
    for mode in ("default", "max-autotune"):
        root = tmp_path / mode
        root.mkdir()
        shutil.copy(DATA / "compiled" / "models.py", root / "models.py")
        (root / "c.yaml").write_text(
            "name: c\ntargets: [mi300x]\ncompiled:\n  mm:\n    fn: models.py:mm_bias_gelu\n"
            "    inputs: models.py:mm_inputs\n    shapes: [{M: 256, N: 256, K: 256}]\n    dtypes: [fp32]\n"
            f"    mode: {mode}\n"
        )
        proc = run_cli("compiled", str(root / "c.yaml"), "--out", str(root / "out"), "-n", "0",
                       env={"HARNESS_CHECK_BUDGET_S": "0"})  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[mode] = root / "out"
    said = call_cli("compare", str(runs["default"]), str(runs["max-autotune"]))
    assert said.returncode == 0, said.stdout + said.stderr  # new kernels are news, not a regression
    first = said.stdout.splitlines()[:5]
    assert first[0] == "changed: mode of mm default -> max-autotune", first
    assert first[1].startswith("kernels: 1 added (mm.triton_tem_fused_add_gelu_mm_0); 1 removed (mm.triton_poi"), first
    assert first[2].startswith("new findings: 1 spills (mm.triton_tem_fused_add_gelu_mm_0 M256xN256xK256 fp32 "), first
    assert first[2].endswith(": mi300x)") and first[3] == "exit 0: nothing worse", first
    assert "no changes" not in said.stdout and "cannot be compared" not in said.stdout, said.stdout


def _graph(torch_version: str, *kernels: GraphKernel) -> dict[Key, KernelGraph]:
    key = ("e", "h100", "N8", "fp32")
    return {key: KernelGraph(key, torch_version, kernels)}


def _kernel(name: str, source: str, *verdicts: Verdict) -> GraphKernel:
    return GraphKernel(name, source, source, verdicts)


def test_kernels_added_removed_reconfigured_and_builds_that_stopped_fitting() -> None:
    w4, w8 = '{"XBLOCK": 1024, "num_warps": 4}', '{"XBLOCK": 512, "num_warps": 8}'
    base = _graph("2.12.0", _kernel("k0", "a", Verdict(w4, True, "")), _kernel("gone", "g", Verdict(w4, True, "")))
    over = Verdict(w4, False, "shared 300000 over 232448")
    new = _graph("2.13.0", _kernel("k0", "a", over, Verdict(w8, True, "")), _kernel("k1", "n", Verdict(w8, True, "")))
    cmp = compare(base, new)
    kinds = {(c.kernel, c.kind) for c in cmp.changes}
    assert kinds == {("gone", "removed"), ("k1", "added"), ("k0", "changed")}
    (k0,) = [c for c in cmp.changes if c.kernel == "k0"]
    assert k0.detail == (f"config added {w8}",)  # same source: no source line
    assert cmp.worse == (f"e h100 N8 fp32: k0 {w4} built and fit before, now: shared 300000 over 232448",)
    assert cmp.exit_code == 2 and (cmp.base_torch, cmp.new_torch) == ("2.12.0", "2.13.0")


def test_a_graph_the_new_run_lacks_is_listed_not_judged() -> None:
    base = _graph("2.12.0", _kernel("k0", "a", Verdict("{}", True, "")))
    gone = compare(base, {})
    assert gone.only_in_base == ("e h100 N8 fp32",) and gone.exit_code == 0 and not gone.changes
    assert compare({}, base).only_in_new == ("e h100 N8 fp32",)


def test_an_unsupported_torch_is_refused_in_one_line_naming_the_supported_ones(monkeypatch) -> None:
    from harness.intake.inductor import inductor_face

    inductor_face.check_torch("2.13.0+cpu")
    inductor_face.check_torch("2.11.0+cu130")
    monkeypatch.delenv(inductor_face.UNCHECKED, raising=False)
    with pytest.raises(inductor_face.InductorFaceError) as refused:
        inductor_face.check_torch("2.12.1+cu128")
    said = str(refused.value)
    assert "\n" not in said and "torch 2.12.1+cu128 is not supported" in said and "2.11, 2.13" in said
    monkeypatch.setenv(inductor_face.UNCHECKED, "1")
    inductor_face.check_torch("2.12.1+cu128")  # asked for: tried anyway, and the tables say torch_checked: false
    assert not inductor_face.checked("2.12.1+cu128")
