"""Strings from matrices, kernels and compilers cannot drive a terminal, break a report or run in a spreadsheet.

A real stored run (the H200 gate run g3) with hostile text planted where users' and compilers' text lands — a
kernel name with an erase-screen sequence and a one-character CSI (U+009B), a compile error with an OSC title
sequence, an environment named ``<script>``, a kernel name that is a spreadsheet formula — rendered by
``harness report`` into the terminal summary, report.md, report.html and the CSV export.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

from helpers import DATA, call_cli, run_cli

ESC_CLEAR, CSI_C1, OSC_TITLE = "\x1b[2J", "\x9b31m", "\x1b]0;owned\x07"
#: the right-to-left override and the isolates: a name that displays as something other than it is
BIDI = "\u202e\u2066\u2067\u2068\u2069\u200f"
UNSHOWN = "\x1b\x9b\x07" + BIDI


def test_hostile_strings_are_inert_in_every_output(tmp_path: Path) -> None:
    doc = json.loads(gzip.decompress((DATA / "h200_gate" / "g3" / "results.json.gz").read_bytes()))
    compiles = [r for r in doc["records"] if r["mode"] == "compile"]
    for r in compiles[:3]:
        r["kernel"] = f"evil{ESC_CLEAR}{CSI_C1}{BIDI}gnp.exe"
    compiles[3]["kernel"] = '=HYPERLINK("http://x")'
    compiles[4].update(
        status="error",
        error=f"PassManager failed{OSC_TITLE} at <b>{BIDI}",
        fits=None,
        traceback=f"Traceback (most recent call last):\n  {ESC_CLEAR}{CSI_C1}{BIDI}\nRuntimeError: {OSC_TITLE}",
    )
    compiles[5]["environment"] = "<script>alert(1)</script>"
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(doc))
    proc = call_cli("report", str(run), "--csv", str(tmp_path / "out.csv"), "--wide", "--vendor-eval")
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    base = tmp_path / "base"
    base.mkdir()
    (base / "results.json").write_bytes(gzip.decompress((DATA / "h200_gate" / "g3" / "results.json.gz").read_bytes()))
    cmp = call_cli(
        "compare", str(base), str(run), "--markdown", str(tmp_path / "cmp.md"), "--json", str(tmp_path / "cmp.json")
    )
    assert cmp.returncode in (0, 1, 2), cmp.stdout[-2000:] + cmp.stderr[-2000:]
    texts = {
        "terminal": proc.stdout + proc.stderr,
        "report.md": (run / "report.md").read_text(),
        "report.html": (run / "report.html").read_text(),
        "csv": (tmp_path / "out.csv").read_text(),
        "vendor-eval.md": (run / "vendor-eval.md").read_text(),
        "compare terminal": cmp.stdout + cmp.stderr,
        "compare.md": (tmp_path / "cmp.md").read_text(),
    }
    assert "<details>" in texts["report.md"]  # the folded traceback is there, its controls gone
    for name, text in texts.items():
        assert not [ch for ch in UNSHOWN if ch in text], name
    assert "evil" in texts["terminal"] and "evil" in texts["report.md"]  # the name shown, its controls gone
    assert "evil" in texts["compare.md"] and "evil" in texts["vendor-eval.md"]
    for name in ("report.md", "vendor-eval.md", "compare.md"):
        assert "<script>" not in texts[name], name
    assert "<script>alert" not in texts["report.html"]
    json.loads((tmp_path / "cmp.json").read_text())  # JSON escapes what it holds: it stays valid
    cells = [cell for row in csv.reader(texts["csv"].splitlines()) for cell in row]
    assert '\'=HYPERLINK("http://x")' in cells and not [c for c in cells if c.startswith("=")]


def test_a_live_run_shows_a_hostile_compile_error_inert_and_the_matrix_refuses_such_names(tmp_path: Path) -> None:
    """The failure header pytest prints, the terminal summary and report.md of a real run whose kernel raises an
    error holding controls and bidi overrides; a matrix whose kernel name holds one is refused in one line."""
    from helpers import write_matrix

    kernel = tmp_path / "loud_kernel.py"
    kernel.write_text(
        (DATA / "bad_callbacks.py").read_text().split("def hang")[0]
        + f"def loud(*_):\n    raise ValueError({(ESC_CLEAR + CSI_C1 + OSC_TITLE + BIDI + 'gnp.exe')!r})\n\n\n"
        + "SPEC = KernelSpec(name='loud', fn=copy_kernel, dims=('N',), dtypes=('fp32',), tunables=('BLOCK',),\n"
        + "                  nvidia_configs=({'BLOCK': 16},), amd_configs=({'BLOCK': 16},), runtime_args=loud,\n"
        + "                  grid=lambda s, c: (1,))\n"
    )
    matrix = write_matrix(
        tmp_path / "m.yaml",
        f"name: loud\ntargets: [h100]\nkernels:\n  loud:\n    source: {kernel}:SPEC\n    dtypes: [fp32]\n"
        "    shapes: [{N: 64}]\n    interpret: false\n",
    )
    proc = run_cli("run", str(matrix), "--out", str(tmp_path / "run"), "-n", "0", "--static-only")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = (tmp_path / "run" / "report.md").read_text()
    assert "ValueError" in proc.stdout and "gnp.exe" in report
    for name, text in (("terminal", proc.stdout + proc.stderr), ("report.md", report)):
        assert not [ch for ch in UNSHOWN if ch in text], name
    for bad in (CSI_C1, "\u202e", "\u2066"):
        named = write_matrix(tmp_path / "named.yaml", matrix.read_text().replace("  loud:", f'  "lo{bad}ud":'))
        said = call_cli("validate", str(named))
        text = said.stdout + said.stderr
        assert said.returncode == 2 and f"U+{ord(bad[0]):04X}" in text and "named.yaml:4:" in text, text
        assert len(text.strip().splitlines()) == 1 and not [c for c in UNSHOWN if c in text], text
