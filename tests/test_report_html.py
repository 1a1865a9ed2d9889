"""report.html: self-contained (no network), escaped, with the portability matrix and charts from real records."""

from __future__ import annotations

import dataclasses
import re

from helpers import DATA, call_cli

from harness.analysis.findings import analyse
from harness.model.run_info import RunInfo
from harness.render import report_md, vendor_eval
from harness.render.html_page import html_report
from harness.results.store import load_results


def test_a_real_device_run_renders_tables_and_a_chart(tmp_path) -> None:
    proc = call_cli("report", str(DATA / "h200_run_m"), "--out", str(tmp_path / "report.md"))
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "<h3>matmul</h3>" in page and page.count("<tr>") > 10
    svg = re.findall(r"<svg.*?</svg>", page, re.S)
    assert svg and svg[0].count("<rect") >= 2 and "torch.matmul" in svg[0]  # the winner and its baseline
    # nothing to fetch: no script, no external stylesheet, image or font
    assert "<script" not in page and not re.search(r"(src|href)=\"?https?:", page)


def test_strings_from_matrices_and_kernels_are_escaped() -> None:
    """Every section of report.html, report.md and vendor-eval.md, fed names with a script tag, a pipe,
    backticks, a quote and a newline: in kernel and config names, errors, the host and the matrix name."""
    run, records = load_results(DATA / "h200_run_m")
    evil = '<script>alert(1)</script>|`x`"\nnext'
    odd = [dataclasses.replace(r, kernel=evil, error=evil, config_id=r.config_id + evil) for r in records]
    odd[0] = dataclasses.replace(odd[0], status="error")  # listed under Failures
    # a second Triton version too, so the version-comparison section renders the names as well
    odd += [dataclasses.replace(r, triton="9.9.9") for r in odd if r.mode == "compile"]
    info = RunInfo.from_json({**run.to_json(), "host": evil, "matrix": {"name": evil}, "dir": evil})
    page = html_report(analyse([info], odd))
    for section in ("On the device", "Vendor evaluation", "Between Triton versions", "Failures", "Data"):
        assert f"<h2>{section}</h2>" in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '"\nnext' not in page and "&quot;" in page
    md_text = report_md.markdown_report(analyse([info], odd)) + vendor_eval.markdown(
        list(analyse([info], odd).evaluations)
    )
    assert "<script>" not in md_text and "&lt;script>" in md_text
    assert "|`x`" not in md_text and "\\|\\`x\\`" in md_text  # cannot end a cell or open code
    assert '"\nnext' not in md_text  # nor break a table row


def test_the_h200_nightly_has_a_roofline_with_every_winner_and_baseline(tmp_path) -> None:
    """The stored H200 nightly (run AF): one roofline for h200, a point per tuned winner and per baseline at its
    case's FLOP per byte, under the catalogue's HBM and compute roofs; a memory-bound rate becomes TFLOP/s."""
    import gzip

    from harness.analysis.roofline import MEMORY
    from harness.model import targets

    (tmp_path / "af").mkdir()
    data = gzip.decompress((DATA / "h200_nightly" / "results.json.gz").read_bytes())
    (tmp_path / "af" / "results.json").write_bytes(data)
    run, records = load_results(tmp_path / "af")
    found = analyse([run], records)
    assert [d.device for d in found.rooflines] == ["h200"]
    chart = found.rooflines[0]
    h200 = targets.get("h200")
    assert chart.bandwidth_tbps == h200.hbm_tbps and ("fp16", h200.fp16_tflops) in chart.compute
    expected = sum(1 + len(m.baselines) for m in found.measured if m.roof.intensity > 0)
    assert len(chart.points) == expected >= 100
    for m in found.measured:  # a memory-bound winner: GB/s times FLOP per byte, in TFLOP/s
        if m.roof.bound == MEMORY and m.roof.intensity > 0:
            label = f"{m.kernel} {m.dtype} {m.shape_id}: {m.config_id}"
            point = next(p for p in chart.points if p.winner and p.label == label)
            assert abs(point.tflops - m.roof.rate * m.roof.intensity / 1000) < 1e-9
    page = html_report(found)
    section = page.split("<h2>Rooflines</h2>", 1)[1].split("</svg>", 1)[0]
    assert section.count("<circle") == expected and "HBM 4.8 TB/s" in section and "fp16 989.4 TFLOP/s" in section
