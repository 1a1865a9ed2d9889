"""The report's views of merged runs, on real data: the vendor evaluation (H200 device run + static runs),
and the comparison between the two Triton versions a merge holds (real static runs with 3.6.0 and 3.9.0)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import DATA, call_cli

from harness.analysis import versions
from harness.analysis.findings import analyse
from harness.analysis.roofline import roof_of
from harness.results.store import load_results


def test_vendor_evaluation_of_a_device_run(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    proc = call_cli("report", str(DATA / "h200_run_m"), "--out", str(out), "--vendor-eval")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "vendor-eval.md").read_text()
    _, records = load_results(DATA / "h200_run_m")
    tunes = [r for r in records if r.mode == "tune" and r.status == "ok"]
    evals = list(analyse([], records).evaluations)
    ran = [ev for ev in evals if ev.devices]
    assert len(ran) == len(tunes)
    for ev in ran:  # each device figure is the run's own record, carried through
        (m,) = ev.devices
        rec = next(
            t
            for t in tunes
            if (t.kernel, t.dtype, t.shape_id, t.target) == (ev.kernel, ev.dtype, ev.shape_id, m.target)
        )
        assert m.config_id == rec.config_id and m.median_us == rec.runtime.median_us
        assert m.roof == roof_of(rec) and m.pct_peak == m.roof.pct
        # a run from before sustained timings: its figure says it is the isolated one
        assert m.method == (rec.runtime.timing_method or "isolated") == "isolated"
        assert f"{m.config_id}, {m.median_us:.1f} µs isolated, {m.roof.label}" in text
        assert ev.winner_fits_elsewhere[m.target].startswith(("fits every target", "vendor-specific: not on"))
    assert "| matmul | fp16 |" in text


def test_the_page_compares_the_triton_versions_it_holds(tmp_path: Path) -> None:
    pins = [DATA / "static_triton36", DATA / "static_triton39"]
    proc = call_cli("report", *map(str, pins), "--out", str(tmp_path / "report.md"))
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "report.html").read_text()
    section = page.split("<h2>Between Triton versions</h2>")[1]
    assert "<h3>3.6.0 → 3.9.0</h3>" in section
    matched = int(re.search(r"<p>(\d+) builds matched", section).group(1))
    # the same answer harness compare gives for the two runs
    cmp = call_cli("compare", *map(str, pins), "--json", str(tmp_path / "cmp.json"))
    data = json.loads((tmp_path / "cmp.json").read_text())
    assert matched == data["matched"] > 0
    assert f"exit {cmp.returncode}:" in section
    _, r36 = load_results(pins[0])
    _, r39 = load_results(pins[1])
    assert versions.versions(r39 + r36) == ["3.6.0", "3.9.0"]
    # links to each run's data, relative to the page
    assert 'href="' in page and "static_triton36/results.json" in page


def test_a_static_runs_vendor_evaluation_compares_what_it_can(tmp_path: Path) -> None:
    """No GPU ran: the evaluation is per target how many configs fit and what they cost, not empty device columns.
    The counts are checked against the records (the deciding builds, counted here by hand)."""
    proc = call_cli("report", str(DATA / "static_triton36"), "--out", str(tmp_path / "report.md"), "--vendor-eval")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "vendor-eval.md").read_text()
    assert text.startswith("# Vendor evaluation (static)") and "not run on a GPU" not in text
    records = json.loads((DATA / "static_triton36" / "results.json").read_text())["records"]
    for r0 in {(r["kernel"], r["dtype"], r["target"]) for r in records if r["mode"] == "compile"}:
        kernel, dtype, target = r0
        deciding = [r for r in records if r["mode"] == "compile" and (r["kernel"], r["dtype"], r["target"]) == r0
                    and r["environment"] == "default"]  # fmt: skip
        for shape in {json.dumps(r["shape"], sort_keys=True) for r in deciding}:
            mine = [r for r in deciding if json.dumps(r["shape"], sort_keys=True) == shape]
            fit = sum(1 for r in mine if r["status"] == "ok" and r["fits"])
            regs = sorted(r["resources"]["registers"] for r in mine if r["status"] == "ok")
            said = f"{target}: {fit} of {len(mine)} fit; regs median {regs[len(regs) // 2]} (max {regs[-1]})"
            assert said in text, (said, text)
    page = (tmp_path / "report.html").read_text()
    assert "<h2>Vendor comparison (static)</h2>" in page
