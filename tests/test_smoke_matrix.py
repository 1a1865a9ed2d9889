"""The default matrix, cold then warm: acceptance of the core harness in one place."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import unquote

import yaml
from helpers import REPO, call_cli, run_cli

SMOKE = yaml.safe_load((REPO / "matrices" / "smoke.yaml").read_text())
SMOKE_KERNELS = set(SMOKE["kernels"])
#: the compiled entry's kernels are cases named ``entry.kernel`` (Inductor's names, per its capture)
COMPILED = tuple(f"{name}." for name in SMOKE.get("compiled", {}))


def _hand_written(kernels: set[str]) -> set[str]:
    return {k for k in kernels if not k.startswith(COMPILED)}


def test_every_kernel_has_ptx_and_amdgcn_for_both_targets(smoke_runs: dict) -> None:
    out = smoke_runs["dir"] / "cold"
    assert (out / "report.md").is_file()
    page = (out / "report.html").read_text()  # every run writes the HTML report too
    assert all(f"<h3>{k}</h3>" in page for k in ("vector_add", "matmul", "moe_gemm"))
    folders = [unquote(h) for h in re.findall(r'href="([^"]+)/"', page)]  # each config links its artifacts
    assert len(folders) > 50 and all((out / f).is_dir() and any((out / f).glob("kernel.*")) for f in folders)
    records = json.loads((out / "results.json").read_text())["records"]
    kernels = {r["kernel"] for r in records}
    assert _hand_written(kernels) == SMOKE_KERNELS
    # the compiled entry (torch.compile of the same loss): Inductor's kernels, built for both targets
    compiled = kernels - SMOKE_KERNELS
    assert COMPILED and compiled and all(k.startswith(COMPILED[0] + "triton_") for k in compiled), compiled
    assert {(r["kernel"], r["target"]) for r in records if r["kernel"] in compiled} == {
        (k, t) for k in compiled for t in ("h100", "mi300x")
    }
    for kernel in SMOKE_KERNELS:
        assert list((out / "artifacts" / kernel).rglob("h100/*/*/kernel.ptx")), kernel
        assert list((out / "artifacts" / kernel).rglob("mi300x/*/*/kernel.amdgcn")), kernel


def test_table_shows_an_h100_config_over_mi300x_lds_with_the_metadata_count(smoke_runs: dict) -> None:
    import triton

    from harness.compiling import launchspec
    from harness.intake import loader
    from harness.model import targets
    from harness.support import tritoncompat

    out = smoke_runs["dir"] / "cold"
    records = json.loads((out / "results.json").read_text())["records"]
    over = [
        r
        for r in records
        if r["target"] == "mi300x"
        and r["kernel"] in ("matmul", "flash_attention")
        and r["environment"] == "default"
        and any(f["resource"] == "shared" for f in r["flags"])
    ]
    assert over
    rec = over[0]
    h100 = next(
        r for r in records if r["target"] == "h100" and r["config"] == rec["config"] and r["shape"] == rec["shape"]
    )
    assert h100["fits"] is True
    spec = loader.load(loader.resolve(rec["kernel"], None))
    meta, options = spec.split_config(rec["config"])
    t = targets.get("mi300x")
    options = {k: v for k, v in options.items() if k in tritoncompat.backend_option_names("hip")}
    launch = launchspec.for_case(
        spec, rec["shape"], rec["dtype"], meta, options, launchspec.backend_for(t.backend, t.arch, t.warp_size)
    )
    compiled = triton.compile(
        launchspec.ast_source(spec.fn, launch),
        target=tritoncompat.gpu_target(t.backend, t.arch, t.warp_size),
        options=launch.options,
    )
    shared = int(compiled.metadata.shared)
    assert rec["resources"]["shared"] == shared > 65536
    from harness.model.ids import shape_id

    row = next(
        line
        for line in smoke_runs["stdout"]["cold"].splitlines()
        if f" {rec['config_id']} " in line and f" {shape_id(rec['shape'])} " in line
    )
    assert "NVIDIA only" in row
    assert f"{shared} > 65536" in row


def test_mi300x_is_swept_with_async_copy_and_a_verdict_flips(smoke_runs: dict) -> None:
    """Issue acceptance: a config that fits MI300X by default and exceeds it with async copy, in the table."""
    from harness.model.ids import shape_id

    records = json.loads((smoke_runs["dir"] / "cold" / "results.json").read_text())["records"]
    by_key: dict[tuple, dict[str, dict]] = {}
    for r in records:
        if r["mode"] == "compile" and r["target"] == "mi300x":
            by_key.setdefault((r["kernel"], json.dumps(r["shape"]), r["config_id"]), {})[r["environment"]] = r
    swept = [envs for envs in by_key.values() if "async-copy" in envs]
    assert {envs["default"]["kernel"] for envs in swept} == {"matmul"}  # the kernel whose entry names the sweep
    flips = [envs for envs in swept if envs["default"]["fits"] and not envs["async-copy"]["fits"]]
    assert flips
    default, async_copy = flips[0]["default"], flips[0]["async-copy"]
    assert default["resources"]["shared"] < async_copy["resources"]["shared"]
    row = next(
        line
        for line in smoke_runs["stdout"]["cold"].splitlines()
        if f" {default['config_id']} " in line and f" {shape_id(default['shape'])} " in line
    )
    assert "AT RISK" in row and f"{async_copy['resources']['shared']} > 65536" in row


def test_warm_rerun_is_served_by_the_caches(smoke_runs: dict) -> None:
    # what makes a re-run fast is that nothing is compiled again: judged by Triton's own cache outcome per build,
    # not by the wall clock (a loaded CI runner makes any time ratio a coin toss)
    cold_records = json.loads((smoke_runs["dir"] / "cold" / "results.json").read_text())["records"]
    warm_records = json.loads((smoke_runs["dir"] / "warm" / "results.json").read_text())["records"]

    def strip(rs: list[dict]) -> list[str]:
        keep = ("kernel", "target", "config", "resources", "flags")
        return sorted(json.dumps({k: r[k] for k in keep}, sort_keys=True) for r in rs if r["mode"] == "compile")

    assert strip(cold_records) == strip(warm_records)  # the cache changes the time, not the answer
    built = lambda rs: [r for r in rs if r["mode"] == "compile" and r["status"] == "ok"]  # noqa: E731
    # cold: every binary compiled from source at least once (later builds of the same binary in the run may hit)
    # (not the compiled entry's: Inductor's kernels build through Inductor's own Triton cache, shared by every run on
    # the host as a user's torch.compile shares it, so a "cold" run may find them there)
    hand = [r for r in built(cold_records) if not r["kernel"].startswith(COMPILED)]
    missed = {r["cache_key"] for r in hand if r["compile_cache"] == "miss"}
    assert missed == {r["cache_key"] for r in hand} and "" not in missed
    # warm: nothing compiled or interpreted again; every build from the harness's result cache, its artifacts (linked
    # into the warm run's folder) byte-identical to what the cold run recorded
    assert {r["compile_cache"] for r in built(warm_records)} == {"harness"}
    warm_dir = smoke_runs["dir"] / "warm"
    for r in built(warm_records):
        for art in r["artifacts"].values():
            assert hashlib.sha256((warm_dir / art["path"]).read_bytes()).hexdigest() == art["sha256"], art["path"]
    checks = [r for r in warm_records if r["mode"] == "interpret" and r["status"] == "ok"]
    assert checks and all(r["correctness"]["from_cache"] for r in checks)
    cold, warm = smoke_runs["timings"]["cold"], smoke_runs["timings"]["warm"]
    print(f"smoke matrix: cold {cold:.1f} s, warm {warm:.1f} s")  # shown with -s; README quotes measured runs


def test_validate_counts_the_builds_a_run_makes(smoke_runs: dict) -> None:
    records = json.loads((smoke_runs["dir"] / "cold" / "results.json").read_text())["records"]
    built = sum(1 for r in records if r["mode"] == "compile")  # the compile-environment sweep included
    proc = call_cli("validate", str(REPO / "matrices" / "smoke.yaml"))
    assert proc.returncode == 0 and f", {built} compiles per Triton version" in proc.stdout, (built, proc.stdout)


def test_memory_bound_kernels_amd_spaces_keep_full_occupancy(smoke_runs: dict) -> None:
    """The compiler's own `; Occupancy` line: a memory-bound kernel's AMD configs must not trade occupancy away
    (waves_per_eu = 2 padded vector_add's 12 VGPRs to an occupancy of 2)."""
    records = json.loads((smoke_runs["dir"] / "cold" / "results.json").read_text())["records"]
    memory_bound = {"vector_add", "fused_activation", "softmax", "rmsnorm", "cross_entropy"}
    amd = [
        r
        for r in records
        if r["kernel"] in memory_bound
        and r["target"] == "mi300x"
        and r["environment"] == "default"
        and r["origin"] in ("amd", "nvidia+amd")
        and r["status"] == "ok"
    ]
    assert {r["kernel"] for r in amd} == memory_bound
    low = {
        (r["kernel"], r["config_id"]): r["resources"]["compiler_occupancy"]
        for r in amd
        if r["resources"]["compiler_occupancy"] < 4
    }
    assert not low, low


def test_the_default_terminal_summary_fits_100_columns_and_80_on_a_terminal(smoke_runs: dict) -> None:
    out = smoke_runs["stdout"]["warm"]
    # the run's own pytest session reads the ini where the matrix lives (this repository's): an option of a plugin
    # the run turns off (tmp_path_retention_policy) printed a warning summary of 150-column lines on every run
    assert all("warnings summary" not in o and "PytestConfigWarning" not in o for o in smoke_runs["stdout"].values())
    start = out.index("triton portability")
    end = out.index("harness: results in")
    summary = out[start:end].splitlines()[1:]
    assert summary and max(len(line) for line in summary) <= 100, max(summary, key=len)
    records = json.loads((smoke_runs["dir"] / "warm" / "results.json").read_text())["records"]
    # the per-kernel lines: a kernel name too long for the column (Inductor's) has its counts on the next line
    head = next(i for i, line in enumerate(summary) if line.startswith("portability ("))
    section = [line for line in summary[head + 1 :]]
    section = section[: next((i for i, line in enumerate(section) if not line.startswith(" ")), len(section))]
    assert {line.split()[0] for line in section if line[2] != " "} == {r["kernel"] for r in records}
    assert "worst findings (as report.html and report.md list them):" in out and "NVIDIA only: " in out
    # on an 80-column terminal the same summary (compiled entry included) is drawn at 80: every line within it
    from harness.analysis.findings import analyse
    from harness.render import terminal
    from harness.results.store import load_results

    run, stored = load_results(smoke_runs["dir"] / "warm" / "results.json")
    narrow = [line for _, line in terminal.final_lines(analyse([run], stored), False, 80)]
    assert narrow[narrow.index("compiled functions: what each target gets (graphs in report.md):") - 1] != ""
    assert max(len(line) for line in narrow) <= 80, max(narrow, key=len)
    assert not [line for line in narrow if line.endswith("…")]  # wrapped, never cut


def test_the_terminal_report_md_and_report_html_give_the_same_worst_findings_in_order(smoke_runs: dict) -> None:
    import html as html_lib

    out = smoke_runs["dir"] / "warm"
    said = smoke_runs["stdout"]["warm"].split("worst findings (as report.html and report.md list them):\n")[1]
    terminal: list[str] = []
    # numbered items, wrapped lines indented; the harness's own lines after them (not-checked reasons, results)
    for line in said.split("\nharness: ")[0].splitlines():
        if re.match(r"^  \d+\. ", line):
            terminal.append(line.split(". ", 1)[1])
        else:
            terminal[-1] += " " + line.strip()
    md_text = (out / "report.md").read_text()
    glance = md_text.split("## At a glance")[1].split("\n## ")[0]
    assert md_text.index("## At a glance") < md_text.index("## Comparison")  # the answer before the wide table
    markdown = [re.sub(r"\\(.)", r"\1", m).replace("&lt;", "<") for m in re.findall(r"^\d+\. (.*)$", glance, re.M)]
    page = (out / "report.html").read_text()
    items = re.findall(r"<li><b>(.*?)</b> (.*?): <b>(.*?)</b>(?: — (.*?))?</li>", page.split("Worst findings")[1])
    in_html = [html_lib.unescape(f"{cat}: {k} {label}" + (f" — {why}" if why else "")) for k, label, cat, why in items]
    assert len(terminal) >= 3 and terminal == markdown == in_html, (terminal, markdown, in_html)
    assert all("…" not in line for line in terminal)  # reasons whole, not cut


def test_one_binary_launched_alike_is_one_config(smoke_runs: dict) -> None:
    """No two builds of one case and target that are not marked duplicates share a binary (sha256 of the file on
    disk) and launch parameters (warps, shared bytes, CTAs, grid); the pairs seen in stored runs are marked."""
    import hashlib

    out = smoke_runs["dir"] / "cold"
    records = json.loads((out / "results.json").read_text())["records"]
    seen: dict[tuple, str] = {}
    marked = 0
    for r in records:
        kind = next((k for k in ("cubin", "hsaco") if k in r["artifacts"]), None)
        if r["mode"] != "compile" or r["status"] != "ok" or kind is None:
            continue
        digest = hashlib.sha256((out / r["artifacts"][kind]["path"]).read_bytes()).hexdigest()
        res = r["resources"]
        ident = (
            r["kernel"],
            r["dtype"],
            json.dumps(r["shape"]),
            r["target"],
            r["environment"],
            digest,
            res["num_warps"],
            res["shared"],
            res["num_ctas"],
            json.dumps(res["grid"]),
        )
        if r["duplicate_of"]:
            marked += 1
            assert seen.get(ident) == r["duplicate_of"], r["config_id"]
        else:
            assert ident not in seen, f"{r['kernel']} {r['target']} {r['config_id']} and {seen[ident]}: one binary"
            seen[ident] = r["config_id"]
    by = {
        (r["kernel"], json.dumps(r["shape"]), r["target"], r["environment"], r["config_id"]): r
        for r in records
        if r["mode"] == "compile"
    }
    vadd, soft = json.dumps({"N": 1000003}), json.dumps({"M": 1024, "N": 1000})
    assert by[("vector_add", vadd, "h100", "default", "BLOCK1024_s1_w4_wpe0")]["duplicate_of"] == "BLOCK1024_s2_w4"
    for target in ("h100", "mi300x"):  # the cubin and the hsaco: num_stages and waves_per_eu 0 change nothing
        assert by[("softmax", soft, target, "default", "M1_CHUNK0_s1_w8_wpe0")]["duplicate_of"] == "M1_CHUNK0_s2_w8"
    assert marked >= 2
    # counted once: the terminal summary names them, and the device phase would not launch them
    assert "same binary as another" in smoke_runs["stdout"]["warm"]


def test_the_matrix_in_1_3_and_7_shards_reports_as_the_one_run(smoke_runs: dict) -> None:
    """Issue 25: each shard its own ``harness run`` process (builds and checks from the result cache the runs above
    filled, as the warm run took them); the night's folder reported as one run gives the warm run's report.md,
    report.html and CSV, and its shards' stored verdicts together are the warm run's. Set aside: timestamps,
    the lines that name the shard runs, the run directories in links, and compile_s (how long this process took
    to fetch the build)."""
    tmp, env = smoke_runs["dir"], smoke_runs["env"]

    def rendered(run: Path, label: str) -> dict[str, str]:
        out = tmp / "reports" / label
        proc = call_cli("report", str(run), "--out", str(out / "report.md"), "--csv", str(out / "r.csv"), env=env)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        texts = {name: (out / name).read_text() for name in ("report.md", "report.html", "r.csv")}
        texts["report.html"] = texts["report.html"].split("<h2>Data</h2>")[0]  # links to each run's files
        for name, text in texts.items():
            text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+\d:]*", "TIME", text)
            text = re.sub(r"(\.\./)+(warm|shards\d+)(/s\d+)?", "RUN", text)  # a run's, a night's or a shard's path
            texts[name] = "\n".join(
                line
                for line in text.splitlines()
                if "shard runs (of" not in line and ",compile_s," not in line and ",compile_cpu_s," not in line
            )
        return texts

    def stored_verdicts(runs: list[Path]) -> list[str]:
        docs = [json.loads((run / "results.json").read_text()) for run in runs]
        return sorted(json.dumps(v, sort_keys=True) for d in docs for k in ("verdicts", "portability") for v in d[k])

    alone = rendered(tmp / "warm", "warm")
    assert "RUN/artifacts/" in alone["report.html"] and "TIME" in alone["report.md"]
    assert "harness repro RUN 'matmul[" in alone["report.md"]  # each failed or exceeding build's script
    for total in (1, 3, 7):
        night = tmp / f"shards{total}"
        for index in range(1, total + 1):
            proc = run_cli("run", "--out", str(night / f"s{index}"), "-n", "0", "--shard", f"{index}/{total}", env=env)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        merged = rendered(night, f"night{total}")
        for name in alone:
            assert merged[name] == alone[name], (total, name)
        assert stored_verdicts([night / f"s{i}" for i in range(1, total + 1)]) == stored_verdicts([tmp / "warm"])
        page = (tmp / "reports" / f"night{total}" / "report.html").read_text()
        assert all(f"../shards{total}/s{i}/results.json" in page for i in range(1, total + 1))


def test_report_html_leads_with_the_answer_and_links_every_targets_artifacts(smoke_runs: dict) -> None:
    """The overview before the tables, configs counted once, each target's verdict linking its own artifacts (the
    mi300x ones too), the legend, configs in numeric order, and opt-in environments' failures said as such."""
    from harness.render.text_table import natural

    out = smoke_runs["dir"] / "cold"
    page = (out / "report.html").read_text()
    assert page.index("At a glance") < page.index("<h2>Runs</h2>") < page.index("<h2>Portability</h2>")
    folders = [unquote(h) for h in re.findall(r'href="([^"]+)/"', page)]
    for target, suffix in (("h100", "ptx"), ("mi300x", "amdgcn")):
        mine = [f for f in folders if f"/{target}/" in f]
        assert mine and all(any((out / f).glob(f"kernel.{suffix}")) for f in mine), target
    assert "Legend" in page and "64 KiB per workgroup (LDS)" in page and "<code>s</code> num_stages" in page
    # report.md's columns in the HTML too: space, the interpreter check, and per target smem, regs, spill, occ, MMA
    assert "<th>space</th><th>cpu interp</th>" in page and "smem B · regs · spill B · occ · MMA" in page
    assert re.search(r"<small>\d+ · \d+ regs · spill \d+ · [\d.]+ \(\d+%\) · \d+ wgmma</small>", page)
    assert re.search(r"<small>\d+ · \d+ regs · spill \d+ · [\d.]+ \(\d+%\) · \d+ mfma</small>", page)
    matmul = page.split("<h3>matmul</h3>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td>fp16</td><td>M1024xN1024xK1024</td><td>[^<]*</td><td>([^<]+)</td>", matmul)
    assert len(rows) > 5 and rows == sorted(rows, key=natural), rows
    assert re.search(r"<p class=note>\d+ config\(s\): ", matmul.split("<table>")[0] if "<table>" in matmul else page)
    md = (out / "report.md").read_text()
    assert "opt-in environment async-copy: does not decide the verdict" in md
