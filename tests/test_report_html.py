"""report.html: self-contained (no network), escaped, with the portability matrix and charts from real records."""
from __future__ import annotations

import dataclasses
import re

from helpers import DATA, run_cli

from harness.records import load_results
from harness.report_html import html_report


def test_a_real_device_run_renders_tables_and_a_chart(tmp_path) -> None:
    proc = run_cli("report", str(DATA / "h200_run_m"), "--out", str(tmp_path / "report.md"))
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "<h3>matmul</h3>" in page and page.count("<tr>") > 10
    svg = re.findall(r"<svg.*?</svg>", page, re.S)
    assert svg and svg[0].count("<rect") >= 2 and "torch.matmul" in svg[0]  # the winner and its baseline
    # nothing to fetch: no script, no external stylesheet, image or font
    assert "<script" not in page and not re.search(r"(src|href)=\"?https?:", page)


def test_strings_from_matrices_and_kernels_are_escaped() -> None:
    run, records = load_results(DATA / "h200_run_m")
    evil = '<script>alert(1)</script>|`x`"\nnext'
    odd = [dataclasses.replace(r, kernel=evil, error=evil) for r in records]
    page = html_report([{**run, "host": evil, "matrix": {"name": evil}}], odd)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '"\nnext' not in page and "&quot;" in page
