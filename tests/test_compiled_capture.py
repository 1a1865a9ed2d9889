"""TorchInductor's kernels captured per vendor (``harness compiled``), with real ``torch.compile`` and real Triton
compiles, under the h100 and mi300x faces: an activation chain at two shapes, softmax, a full reduction whose kernel
graph differs by vendor, mm + bias + gelu with and without max-autotune, and an ``nn.Module`` (an MLP block).

What the capture records is held against Inductor itself, never against a rule of the harness's: each recorded
kernel's source is imported in a child that wears only the target's face, and the configs Inductor's own heuristic
decorator then lists must be the recorded ones; the full reduction's split equals Inductor's
``InductorChoices.reduction_split_factor`` called under that face; every candidate is built with the compile
options Inductor's ``CachingAutotuner`` makes for it. ``harness compiled`` is a run: the records it leaves are the
captures' kernels and configs, reported and compared as any run's. A graph break, a hang and a crash are one line
each, exit 2, with the other entries kept.
"""

from __future__ import annotations

import json
import os
import re
import secrets
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
  careless:
    fn: models.py:activation
    inputs: models.py:float64_inputs
    shapes: [{M: 64, N: 64}]
    dtypes: [fp16]
  planted:
    fn: models.py:logsumexp
    inputs: models.py:planted_pass_failure_inputs
    shapes: [{M: 64, N: 64}]
    dtypes: [fp32]
"""


GOOD_NAMES = ("act", "softmax", "sum", "mm", "mm_autotuned", "mlp")

#: small enough for Triton's interpreter: every config checked in its graph against eager; ``wrong``'s kernel is
#: planted wrong through Inductor's lowering table (tests/data/compiled/planted.py), so each of its checks must fail
CHECKED = """\
  small_mlp:
    fn: models.py:mlp
    factory: true
    inputs: models.py:mlp_inputs
    shapes: [{T: 16, D: 64}]
    dtypes: [fp32]
  act_cd:
    fn: models.py:activation
    inputs: models.py:act_inputs
    shapes: [{M: 64, N: 256}]
    dtypes: [fp16]
    options: {coordinate_descent_tuning: true}
  wrong:
    fn: planted.py:wrong
    inputs: planted.py:wrong_inputs
    shapes: [{M: 16, N: 64}]
    dtypes: [fp32]
  oncuda:
    fn: models.py:softmax
    inputs: models.py:cuda_inputs
    shapes: [{M: 16, N: 64}]
    dtypes: [fp32]
"""
CHECKED_NAMES = ("small_mlp", "act_cd", "wrong", "oncuda")


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, subprocess.CompletedProcess[str], Path]:
    """``harness compiled`` of the good entries with the bad in their middle: the good ones after them still get a
    child of their own, and what captured is run (built, judged, recorded) as a run matrix is."""
    from harness.results.store import load_results

    root = tmp_path_factory.mktemp("compiled")
    # a line of its own: captures are remembered by the modules' path and content, and these must run (the trace)
    (root / "models.py").write_text(f"# {secrets.token_hex(8)}\n" + MODELS.read_text())
    (root / "planted.py").write_text(f"# {secrets.token_hex(8)}\n" + (DATA / "compiled" / "planted.py").read_text())
    body = GOOD.split("  sum:")[0] + BAD + "  sum:" + GOOD.split("  sum:")[1] + CHECKED
    # Inductor's trace turned on for one entry: it must land under --out, not in the working directory
    body = body.replace(
        "    inputs: models.py:one_input\n", "    inputs: models.py:one_input\n    options: {trace.enabled: true}\n", 1
    )
    (root / "m.yaml").write_text("name: inductor\ntargets: [h100, mi300x]\ncompiled:\n" + body)
    (root / "tmp").mkdir()  # the command's temporary folder: what its children leave there is seen below
    env = {**LIMITS, "TMPDIR": str(root / "tmp")}
    # -n 0: its builds in this one run's process (two xdist workers cost 7 CPU-s more and test nothing here)
    proc = run_cli("compiled", str(root / "m.yaml"), "--out", str(root / "out"), "-n", "0", env=env, cwd=root)
    _, records = load_results(root / "out" / "results.json")
    return records, proc, root


#: the run's limits: a capture call's (the bad entries' hang), and the host check's own time (the small entries'
#: checks take well under it, the parity entries' are not run). Captures are remembered under the limits they ran
#: with: :func:`_tables` reads them under the same.
LIMITS = {"HARNESS_CALLBACK_TIMEOUT_S": "8", "HARNESS_CHECK_BUDGET_S": "2"}


def _remembered(requests: list, target: str) -> list:
    """The run's captures of ``requests`` on ``target``, read back from disk under the limits they were kept under."""
    from harness.intake.inductor.compiled_probe import remembered

    before = {k: os.environ.get(k) for k in LIMITS}
    os.environ.update(LIMITS)
    try:
        return remembered(requests, target)
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _tables(root: Path, target: str, names: tuple[str, ...] = GOOD_NAMES) -> dict[str, list[dict]]:
    """Per good entry, the capture's tables on ``target`` the run was built from (remembered on disk by the
    capture: read here, not captured again), each with its ``shape``."""
    from harness.matrix import compiled_entries
    from harness.support import yamlpos
    from harness.support.checking import Checker

    doc = yamlpos.load((root / "m.yaml").read_text())
    made = compiled_entries.requests(Checker("m.yaml", doc), doc.value["compiled"], root)
    good = [r for r in made if r.name in names]
    out = {}
    found = _remembered(good, target)
    for request, outcome in zip(good, found):
        assert not outcome.why and not any(isinstance(t, str) for _, _, t in outcome.tables), (request.name, target)
        out[request.name] = [{**t.json, "shape": shape} for shape, _, t in outcome.tables if not isinstance(t, str)]
    return out


def test_a_graph_break_a_hang_a_crash_and_a_wrong_dtype_are_one_line_each_and_the_rest_is_kept(captured) -> None:
    records, proc, root = captured
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    said = [ln for ln in proc.stderr.splitlines() if ln.startswith("harness:")]
    assert "Traceback" not in proc.stderr
    said_last = proc.stdout.strip().splitlines()[-2:]
    assert said_last[0] == "harness: 5 of 15 compiled entries not captured (said above), left out", said_last
    assert re.fullmatch(r"harness: \d+ configs: .+ · exit 2", said_last[1]), said_last  # one last line, one code
    assert proc.stdout.count(" · exit ") == 1
    for target in ("h100", "mi300x"):
        mine = [ln for ln in said if f" on {target}" in ln]
        assert any("breaks" in ln and "graph break" in ln for ln in mine), said
        assert any("hangs" in ln and "did not return within 8 s" in ln for ln in mine), said
        assert any("crashes" in ln and "exit code 7" in ln for ln in mine), said
        # an fp16 entry whose inputs are float64: said, never compiled in fp64 as if it were the fp16 kernels
        assert any("careless" in ln and "gives float64 tensors for dtype fp16" in ln for ln in mine), said
        # an Inductor pass that fails: its own exception on the line, not Dynamo's "backend='inductor' raised:"
        planted = [ln for ln in mine if "compiled entry planted" in ln]
        assert len(planted) == 1 and "ValueError: a pass failed here (planted)" in planted[0], said
        kept = Path(planted[0].split("(traceback: ")[1].rstrip(")"))
        assert kept.parent == root / "out" / "tracebacks" and "constant_fold_uniform_value" in kept.read_text()
        ran = {r.inductor.entry for r in records if r.target == target}
        assert ran == set(GOOD_NAMES + CHECKED_NAMES), (target, ran)
    assert all(r.status == "ok" for r in records), [(r.kernel, r.error) for r in records if r.status != "ok"]
    # what was left out is said in compiled.md too, not in the terminal alone
    page = (root / "out" / "compiled.md").read_text()
    assert "**Not captured**" in page and all(
        f"compiled entry {n} " in page or f"compiling {n} " in page
        for n in ("breaks", "hangs", "crashes", "careless", "planted")
    ), page[:3000]


def test_every_config_is_checked_on_the_cpu_and_the_planted_wrong_kernel_fails(captured) -> None:
    """Each config of each kernel Inductor generated, run by Triton's interpreter through Inductor's own launcher in
    its graph against eager PyTorch: the small entries' every config passes on both targets; the planted kernel
    fails on every config and fails its cases; entries too large for the interpreter say not checked, never pass."""
    records, proc, root = captured
    for name in ("act_cd", "small_mlp"):  # act_cd: Inductor's listed configs and its tuner's candidates
        mine = [r for r in records if r.inductor.entry == name]
        assert {r.target for r in mine} == {"h100", "mi300x"} and len(mine) >= 7, name
        for r in mine:
            (check,) = r.correctness.checks
            assert check.status == "ok" and check.max_abs_err is not None and check.max_abs_err < 0.01, (
                r.kernel,
                check,
            )
            assert check.shape == r.shape
    wrong = [r for r in records if r.inductor.entry == "wrong"]
    assert wrong and all(r.correctness.checks[0].status == "mismatch" for r in wrong)
    assert all("elements outside" in (r.correctness.checks[0].error or "") for r in wrong)
    for target in ("h100", "mi300x"):
        assert f"FAILED out/compiled.yaml::wrong.triton_poi_fused_add_doubled_0[fp32-M16xN64-{target}" in proc.stdout
    report = (root / "out" / "report.md").read_text()
    assert "interpreter: mismatch: " in report.split("## Failures")[1]
    failed_rows = len({(r.kernel, r.config_id) for r in wrong})
    assert re.search(rf"harness: \d+ configs: {failed_rows} failed[ ,]", proc.stdout), proc.stdout[-600:]
    compiled_md = (root / "out" / "compiled.md").read_text()
    # act_cd's answer, per target: its configs, their findings and checks (the coordinate-descent candidates too)
    assert "- h100: 1 kernel(s), 5 config(s): no findings · checked 5 pass\n" in compiled_md, compiled_md
    assert "- mi300x: 1 kernel(s), 9 config(s): no findings · checked 9 pass\n" in compiled_md, compiled_md
    assert "- h100: 1 kernel(s), 2 config(s): 2 failed · checked 0 pass, 2 FAIL" in compiled_md
    # more interpreter work than the check's time (8 s of capture here): never a pass, not run at all, and the
    # reason, with its numbers and what to do, in the report's own section
    big = [r for r in records if r.inductor.entry == "softmax"]
    assert big and all(r.correctness.checks[0].status == "skipped" for r in big)
    gaps = report.split("## Not checked by the interpreter")[1]
    assert re.search(r"about \d+ s of interpreter work, \d+ s left: over the host check's time", gaps), gaps[:2000]
    assert "raise them, or list a smaller shape" in gaps
    # inputs made on "cuda" whatever device they are given: the check says so, naming the inputs function
    oncuda = [r for r in records if r.inductor.entry == "oncuda"]
    assert oncuda and all(r.correctness.checks[0].status == "skipped" for r in oncuda)
    assert all("the inputs function cuda_inputs made input 0 on cuda" in r.correctness.checks[0].reason
               and "make each tensor on the device it is given" in r.correctness.checks[0].reason
               for r in oncuda), [r.correctness.checks[0].reason for r in oncuda]  # fmt: skip
    assert (
        "| not checked " in report and "- h100: 1 kernel(s), 2 config(s): 2 not-checked · checked 0 pass" in compiled_md
    )
    # and in the entry's answer itself, with its numbers and what to do, not only in a section further down
    said = compiled_md.split("## softmax M8192xN8192 bf16")[1]
    assert re.search(r"- not checked \(4\): about \d+ s of interpreter work, \d+ s left", said), said[:800]
    assert "num_warps h100 16 (512 threads); mi300x 8 (512 threads)" in said, said[:800]


@pytest.mark.browser
def test_coordinate_descent_candidates_are_inductors_own_per_vendor(captured) -> None:
    """With ``coordinate_descent_tuning``, the first round of Inductor's tuner from the winner, per target, held
    against that tuner's own ``get_neighbour_configs`` in a child wearing only the face; built, checked and judged."""
    records, _, root = captured
    theirs = {}
    for target in ("h100", "mi300x"):
        tables = _tables(root, target, ("act_cd",))
        (kernel,) = tables["act_cd"][0]["kernels"]
        reference = _reference_child(target, [kernel], root)
        assert kernel["coordesc"] == reference["coordesc"][f"0:{kernel['name']}"] and kernel["coordesc"], target
        assert len(kernel["launches"][0]["grids"]) == len(kernel["configs"]) + len(kernel["coordesc"])
        mine = [r for r in records if (r.inductor.entry, r.target, r.origin) == ("act_cd", target, "coordesc")]
        assert sorted(json.dumps(r.config, sort_keys=True) for r in mine) == sorted(
            json.dumps(c, sort_keys=True) for c in kernel["coordesc"]
        )
        assert all(r.status == "ok" and r.correctness.checks[0].status == "ok" for r in mine)
        theirs[target] = kernel["coordesc"]
    # the vendors' own rules: occupancy hints (waves_per_eu) are tuned on HIP only
    assert any("waves_per_eu" in c for c in theirs["mi300x"]) and not any("waves_per_eu" in c for c in theirs["h100"])


@pytest.mark.browser
def test_report_html_of_a_compiled_run_opens_with_each_targets_graph_in_chromium(captured, tmp_path) -> None:
    """report.html (laid out by a headless Chromium) opens with the per-entry graph comparison: the compiled
    section sits above the glance and the wide tables, on the first screen."""
    from test_report_browser import _browse

    _, _, root = captured
    page = (root / "out" / "report.html").read_text()
    probe = tmp_path / "measured.html"
    probe.write_text(page.replace("</body>", MEASURE_TOPS + "</body>"))
    proc = _browse(probe, tmp_path / "profile", "--dump-dom", "--window-size=1280,800")
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    tops = json.loads(found.group(1).replace("&quot;", '"'))
    assert 0 <= tops["compiled"] < 800, tops  # on the first screen
    # the first entry's answer, a line per vendor, is on it too, above Inductor's policy notes
    assert 0 < tops["answer"] < 800 and tops["answer"] < tops["policies"], tops
    assert "h100: " in tops["said"] and "mi300x: " in tops["said"] and "checked " in tops["said"], tops
    assert tops["compiled"] < tops["heat"] < tops["portability"], tops
    assert tops["errors"] == []


MEASURE_TOPS = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const top = q => { const el = document.querySelector(q); return el ? Math.round(el.getBoundingClientRect().top) : -1; };
  const heads = [...document.querySelectorAll('h2')];
  const at = text => { const h = heads.find(x => x.textContent === text); return h ? Math.round(h.getBoundingClientRect().top) : -1; };
  const answer = document.querySelector('ul.answer');
  const notes = [...document.querySelectorAll('p.note')].find(p => p.textContent.includes('named policy'));
  const out = {compiled: top('#compiled'), heat: top('table.heat'), portability: at('Portability'),
               answer: top('ul.answer'), said: answer ? answer.textContent : '',
               policies: notes ? Math.round(notes.getBoundingClientRect().top) : -1, errors: window.__errors};
  const pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def test_the_capture_leaves_nothing_in_the_temporary_folder(captured) -> None:
    """Inductor's cache under each face, and whatever the user's code writes there, goes with the child that made
    it, the hung and crashed ones too: a nightly host's ``/tmp`` does not grow by a folder per face per night. What
    may stay is Inductor's own default cache (``torchinductor_<user>``), where the build stage's compiles with
    Inductor's options land as a user's ``torch.compile`` would: shared by every run, keyed by kernel."""
    _, proc, root = captured
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    left = sorted(p.name for p in (root / "tmp").iterdir() if not re.fullmatch(r"torchinductor_\w+", p.name))
    assert left == []
    # nor does Inductor's trace land in the working directory: it is kept under --out, beside the tracebacks
    assert not (root / "torch_compile_debug").exists()
    assert any((root / "out" / "tracebacks" / "inductor-trace").rglob("output_code.py"))


@pytest.mark.parametrize("target", ["h100", "mi300x"])
def test_recorded_kernels_and_configs_are_what_inductor_lists_under_that_face(captured, target: str) -> None:
    """The capture's kernels held against Inductor's decorator under the face; then the run's records against the
    capture: each target's graph, and a record for every config of every kernel in it."""
    records, _, root = captured
    tables = _tables(root, target)
    kernels = [k for name in GOOD_NAMES for table in tables[name] for k in table["kernels"]]
    assert len({k["name"] for k in kernels}) >= 8
    reference = _reference_child(target, kernels, root)
    for i, k in enumerate(kernels):
        assert k["configs"] == reference["configs"][f"{i}:{k['name']}"], (target, k["name"])
        assert k["launches"], k["name"]  # the compiled wrapper launched it, with a grid per config
        assert all(len(la["grids"]) == len(k["configs"]) + len(k["coordesc"]) for la in k["launches"])
    # the full reduction: its first kernel splits the 8192^2 elements by the factor Inductor's split heuristic
    # gives under this face (h100 512 partial sums; mi300x 607, each split again in two: 1214)
    (first, *_rest) = tables["sum"][0]["kernels"]
    xnumel = first["launches"][0]["args"]["xnumel"]
    assert xnumel % reference["split"] == 0 and xnumel // reference["split"] in (1, 2), (xnumel, reference["split"])
    for name in GOOD_NAMES:
        for table in tables[name]:
            listed = {
                (k["name"], json.dumps(c, sort_keys=True))
                for k in table["kernels"]
                for c in k["configs"] + k["coordesc"]
            }
            graph = tuple(k["name"] for k in table["kernels"])
            mine = [r for r in records if (r.inductor.entry, r.target, r.shape) == (name, target, table["shape"])]
            assert {r.inductor.graph for r in mine} == {graph}, name
            assert {(r.inductor.kernel, json.dumps(r.config, sort_keys=True)) for r in mine} == listed, name


def test_the_kernel_graph_and_configs_differ_by_vendor_where_inductor_adapts(captured) -> None:
    _, proc, root = captured
    h100, mi300x = _tables(root, "h100"), _tables(root, "mi300x")
    # a full reduction: h100 splits once (2 kernels), mi300x's 304 CUs and 64-wide waves split twice (3)
    assert [len(t["sum"][0]["kernels"]) for t in (h100, mi300x)] == [2, 3]
    # the same pointwise kernel: Inductor lists 3 more configs on HIP, with waves_per_eu on two
    nv, amd = h100["act"][0]["kernels"][0], mi300x["act"][0]["kernels"][0]
    assert nv["name"] == amd["name"] and (len(nv["configs"]), len(amd["configs"])) == (2, 5)
    assert sum("waves_per_eu" in c for c in amd["configs"]) == 2 and not any("waves_per_eu" in c for c in nv["configs"])
    assert nv["triton_meta"]["device"]["type"] == "cuda" and amd["triton_meta"]["device"]["type"] == "hip"
    # max-autotune: every template choice listed, a Triton template chosen by the stated policy (no timing)
    for tables in (h100, mi300x):
        tuned = tables["mm_autotuned"][0]
        assert tuned["choices"] and len(tuned["choices"][0]["choices"]) > 10
        assert tuned["kernels"][0]["heuristic"] == "template" and "max_autotune_choice" in tuned["policies"]
        assert tables["mm"][0]["kernels"][0]["heuristic"] == "pointwise"  # extern mm + the epilogue
    md = (root / "out" / "compiled.md").read_text()
    assert "sum M8192xN8192 bf16" in md and "kernels: h100 2, mi300x 3" in md
    # the named differences, each from the configs Inductor listed per target (held against Inductor above)
    waves = sorted({c["waves_per_eu"] for c in amd["configs"] if "waves_per_eu" in c})
    assert f"{nv['name']}: waves_per_eu (mi300x only) mi300x {', '.join(map(str, waves))}" in md
    # warps said with the threads they make at each vendor's wave width (32 on NVIDIA, 64 on AMD)
    for mine, theirs in zip(h100["sum"][0]["kernels"], mi300x["sum"][0]["kernels"]):
        if mine["name"] == theirs["name"]:
            warps = [sorted({c["num_warps"] for c in k["configs"]}) for k in (mine, theirs)]
            threads = [", ".join(str(w * width) for w in ws) for ws, width in zip(warps, (32, 64))]
            said = (f"{mine['name']}: num_warps h100 {', '.join(map(str, warps[0]))} ({threads[0]} threads); "
                    f"mi300x {', '.join(map(str, warps[1]))} ({threads[1]} threads)")  # fmt: skip
            assert (said in md) is (warps[0] != warps[1]), (said, warps)
    # the split, named: a kernel of both graphs launched over other parts (the split held against Inductor's
    # reduction_split_factor above) and their length, each as the compiled wrapper launched it on that target
    split = 0
    for mine, theirs in zip(h100["sum"][0]["kernels"], mi300x["sum"][0]["kernels"]):
        sizes = [
            ", ".join(f"{n} {v}" for n, v in sorted(k["launches"][0]["args"].items()) if n.endswith("numel"))
            for k in (mine, theirs)
        ]
        if mine["name"] == theirs["name"] and sizes[0] != sizes[1]:
            assert f"{mine['name']}: split h100 {sizes[0]}; mi300x {sizes[1]}" in md, (sizes, md)
            split += 1
    assert split, "the full reduction's split is not named"
    only = [
        k["name"]
        for k in mi300x["sum"][0]["kernels"]
        if k["name"] not in {n["name"] for n in h100["sum"][0]["kernels"]}
    ]
    assert only and f"only on mi300x: {', '.join(only)}" in md
    assert "max-autotune choices" in md  # the records carry the count of choices each graph listed
    assert "differs: kernels: h100 2, mi300x 3" in proc.stdout
    page = (root / "out" / "compiled.html").read_text()
    assert "<h2>sum · M8192xN8192 · bf16</h2>" in page and "differs: kernels: h100 2, mi300x 3" in page
    assert "reduction&#39;s configs" in page  # Inductor's and the policies' words are escaped, never markup


def test_each_candidate_is_built_with_the_options_inductor_gives_it(captured) -> None:
    records, _, root = captured
    for target, backend in (("h100", "cubin"), ("mi300x", "hsaco")):
        builds = [r for r in records if (r.inductor.entry, r.target) == ("act", target)]
        assert builds and all(r.status == "ok" for r in builds)
        assert all((root / "out" / r.artifacts[backend].path).is_file() for r in builds)
        for r in builds:
            options = r.inductor.options or {}
            # what Inductor's _create_compile_options gives: debug on NVIDIA only, waves_per_eu a backend option
            assert options["debug"] is (target == "h100") and options["sanitize_overflow"] is False
            assert options.get("waves_per_eu") == r.config.get("waves_per_eu")
            assert r.resources.registers and r.resources.registers > 0
            # read by the one reader every build uses (compile.binary_resources): Blackwell's tensor memory too
            assert (r.resources.tmem_columns is not None) is (backend == "cubin")


def test_the_run_reports_where_inductor_adapts_from_its_records(captured, tmp_path) -> None:
    _, proc, root = captured
    said = proc.stdout.split("compiled functions: what each target gets (graphs in report.md):\n")[1]
    # the answer first: each entry, then what each target gets, before the per-kernel portability counts
    assert said.index("  sum M8192xN8192 bf16\n    h100: 2 kernel(s), ") < said.index("portability ("), said
    assert "\n    mi300x: 3 kernel(s), " in said, said
    md = (root / "out" / "report.md").read_text()
    assert "## Compiled functions: what each target gets" in md and "### sum M8192xN8192 bf16" in md
    assert md.index("- h100: 2 kernel(s), ") < md.index("- max_autotune_choice: "), md  # policies after
    assert "- differs: kernels: h100 2, mi300x 3" in md and "- max_autotune_choice: " in md
    assert "<h3>sum · M8192xN8192 · bf16</h3>" in (root / "out" / "report.html").read_text()
    # the section comes from the records alone: a report re-rendered (or merged) from the run directory has it
    again = call_cli("report", str(root / "out"), "--out", str(tmp_path / "again.md"))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "- differs: kernels: h100 2, mi300x 3" in (tmp_path / "again.md").read_text()
    # the run matrix the command ran, its cases selected by id like any other: the sum's kernels only
    some = call_cli("list", str(root / "out" / "compiled.yaml"), "-k", "sum.", env=LIMITS)  # as captured
    assert some.returncode == 0, some.stdout[-2000:] + some.stderr[-2000:]
    ids = [ln for ln in some.stdout.splitlines() if "[" in ln]
    assert len(ids) == 5 and all(i.startswith("sum.triton_") for i in ids), ids  # h100 2 kernels, mi300x 3


def test_two_runs_under_different_torch_pins_compare_kernel_for_kernel(captured) -> None:
    """A run of tests/data/compiled/run.yaml on an H100 under torch 2.11 (stored with the modules Inductor wrote: the
    run of docs/performance.md, "Compiled entries in a run on the GPU") against this torch 2.13 capture: the records'
    comparison, then the kernels Inductor rewrote, as a team reads them before a torch bump."""
    _, _, root = captured
    proc = call_cli("compare", str(DATA / "compiled" / "run-torch211-h100"), str(root / "out"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    said = proc.stdout
    assert "compiled entries: torch 2.11.0 -> 2.13" in said, said[-3000:]
    # 2.13 fuses softmax's exp and sub into its online kernel under another name
    assert "softmax h100 M8192xN8192 bf16: triton_red_fused__softmax_exp_prepare_softmax_online_sub_0 removed" in said
    assert "softmax h100 M8192xN8192 bf16: triton_red_fused__softmax_prepare_softmax_online_0 added" in said
    # 2.13 adds evict_first to the sum's persistent load: the source diff says so, and the binary changed
    assert "sum h100 M8192xN8192 bf16: triton_per_fused__to_copy_pow_sum_1 changed" in said
    assert "eviction_policy='evict_first'" in said and "changed binary" in said
    # the targets and entries only this run has are listed, not judged
    assert "only in new: sum mi300x M8192xN8192 bf16" in said and "only in new: mm_autotuned h100" in said


def test_the_inductor_internals_a_gpu_worker_holds_exist_on_this_torch(captured, tmp_path) -> None:
    """What harness/intake/inductor/inductor_spec.py reads and patches on a GPU worker, held against this torch's Inductor
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
    # an op's regions: their CUDA graphs off on a GPU worker, the op's eager reference, a compiled module's fake weights
    assert hasattr(config.triton, "cudagraphs") and callable(torch.compiler.set_stance)
    from torch.nn.utils import stateless

    assert callable(stateless._reparametrize_module)
    # the CPU check and the coordinate-descent candidates (harness/intake/inductor/compiled_check.py, inductor_launches.py)
    from torch._inductor.runtime import coordinate_descent_tuner as coordesc

    assert callable(CachingAutotuner._interpret_args_grid) and callable(CachingAutotuner._precompile_config)
    assert callable(coordesc.get_field) and callable(coordesc.set_field)
    for name in ("tunable_fields", "get_neighbour_values", "is_valid_config"):
        assert hasattr(coordesc.CoordescTuner, name), name
    assert callable(CachingAutotuner.precompile) and callable(triton_cache_dir)
    assert triton_hash_to_path_key("ab" * 32)  # Triton's hex key to its cache folder's name
    _, _, root = captured
    kernel = _tables(root, "h100")["act"][0]["kernels"][0]
    auto = load_autotuner(kernel["source"], kernel["name"], tmp_path)
    assert isinstance(auto, CachingAutotuner) and auto.launchers == []  # nothing compiled before its first run
    assert auto.inductor_meta["kernel_name"] == kernel["name"] and "device" in auto.triton_meta
    assert hasattr(auto, "_cached_launcher")  # torch 2.13's fast path, reset when a launcher is held
    # an op's region check tells interpreted kernels (made while TRITON_INTERPRET was set) by this flag
    assert auto.triton_interpret is False


def test_a_run_whose_capture_failed_keeps_the_traceback_and_its_folder_takes_the_rerun(tmp_path) -> None:
    """``harness run``: a compiled entry whose capture fails is a failed case (exit 1) whose record names the cause
    and the traceback kept in the run directory; once the entry is mended, the same ``--out`` is the rerun's (the
    kept traceback is the harness's own, written into the folder it marked)."""
    (tmp_path / "models.py").write_text(MODELS.read_text())
    matrix = tmp_path / "m.yaml"
    entry = "  lse:\n    fn: models.py:logsumexp\n    inputs: models.py:{}\n    shapes: [{{M: 64, N: 64}}]\n    dtypes: [fp32]\n"
    matrix.write_text("name: m\ntargets: [h100]\ncompiled:\n" + entry.format("planted_pass_failure_inputs"))
    failed = run_cli("run", str(matrix), "--out", str(tmp_path / "out"), "-n", "0")
    assert failed.returncode == 1 and "ValueError: a pass failed here (planted)" in failed.stdout, failed.stdout
    from harness.results.store import load_results

    _, records = load_results(tmp_path / "out" / "results.json")
    assert [(r.kernel, r.status) for r in records] == [("lse.capture", "error")]
    kept = tmp_path / "out" / "tracebacks" / "lse-h100-M64xN64-fp32.txt"
    assert str(kept) in records[0].error and "Traceback" in kept.read_text()
    matrix.write_text("name: m\ntargets: [h100]\ncompiled:\n" + entry.format("one_input"))
    mended = run_cli("run", str(matrix), "--out", str(tmp_path / "out"), "-n", "0", "--force")
    assert mended.returncode == 0, mended.stdout[-2000:] + mended.stderr[-2000:]


@pytest.mark.parametrize("target", ["h100", "mi300x"])
def test_harness_repro_writes_a_script_that_rebuilds_a_compiled_kernels_config(captured, tmp_path, target: str) -> None:
    """``harness repro`` of an Inductor kernel's case: the module Inductor wrote for that target, compiled with the
    meta and options Inductor's autotuner makes for the config, in a script that needs no harness; run, it gives
    the recorded figures again (exit 0)."""
    import sys

    records, _, root = captured
    record = next(r for r in records if (r.inductor.entry, r.target) == ("softmax", target))
    script = tmp_path / "repro.py"
    # under the run's limits: the capture the run remembered is read, not made again (and checked at full size)
    made = run_cli("repro", str(root / "out"), record.case_id, "--config", record.config_id, "--out", str(script),
                   env=LIMITS)  # fmt: skip
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    text = script.read_text()
    assert "import harness" not in text and "torch._inductor.runtime" in text
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and "reproduced" in ran.stdout, ran.stdout[-2000:] + ran.stderr[-2000:]


def test_the_targets_a_run_names_are_the_ones_its_compiled_entries_are_captured_for(tmp_path: Path) -> None:
    """``--targets`` replaces the matrix's targets for its compiled entries too: captured under that target's face
    and listed there (an h100 matrix run with ``--targets h200`` had no compiled case, without a word)."""
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        f"name: m\ntargets: [h100]\ncompiled:\n  act:\n    fn: {MODELS}:activation\n    inputs: {MODELS}:act_inputs\n"
        "    shapes: [{M: 16, N: 64}]\n    dtypes: [fp32]\n"
    )
    proc = run_cli("list", str(matrix), "--targets", "mi300x")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    ids = [ln for ln in proc.stdout.splitlines() if ln.startswith("act.")]
    assert ids and all("-mi300x-" in i for i in ids), proc.stdout[-2000:]


def test_a_changed_check_changes_no_kernel_reference_only_the_config_s_check(captured) -> None:
    """What a config's host check found is carried beside the config, not in the kernel's reference: the same capture
    with one check changed gives the same references (so the same build jobs, result-cache keys and case keys),
    and only that config's check differs. (The checks were once in the reference: a changed check rebuilt
    every config.)"""
    import copy

    from harness.intake.inductor.captured import CapturedGraph
    from harness.matrix import compiled_entries
    from harness.support import yamlpos
    from harness.support.checking import Checker

    _, _, root = captured
    doc = yamlpos.load((root / "m.yaml").read_text())
    made = compiled_entries.requests(Checker("m.yaml", doc), doc.value["compiled"], root)
    (request,) = [r for r in made if r.name == "small_mlp"]
    (outcome,) = _remembered([request], "h100")  # as the run captured it, read back (not captured again)
    tables = [("h100", shape, dtype, t) for shape, dtype, t in outcome.tables if not isinstance(t, str)]
    edited = copy.deepcopy(dict(tables[0][3].json))
    first = edited["kernels"][0]
    assert first["checks"][0]["status"] == "ok", first["checks"][0]
    first["checks"][0] = {**first["checks"][0], "status": "mismatch", "max_abs_err": 1.0}
    changed = [(*tables[0][:3], CapturedGraph.of(edited)), *tables[1:]]
    same = compiled_entries.entries_of(request, tables, "t", 60.0)
    other = compiled_entries.entries_of(request, changed, "t", 60.0)
    assert [e.ref for e in same] == [e.ref for e in other]
    checks = [[c.check.status if c.check else None for _, cs in e.launched for c in cs] for e in (same[0], other[0])]
    assert checks[0][0] == "ok" and checks[1][0] == "mismatch" and checks[0][1:] == checks[1][1:], checks
