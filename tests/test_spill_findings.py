"""Register spills are a finding kind, counted one way everywhere: a config whose build under Triton's defaults
spills to memory is ``spills`` on that target (never a plain ``fits``), the run's last line counts it, report.md and
report.html say it, ``--fail-on spills`` gates on it, and compare ranks ``fits`` -> ``spills`` as worse.

A real cross-compile: the matmul tile that ptxas spills on sm_90 (tests/test_compile_resources.py reads its spill
bytes from ptxas itself) beside one that does not."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from helpers import run_cli

MATRIX = """\
name: spill-check
targets: [h100]
kernels:
  matmul:
    dtypes: [fp16]
    shapes: [{M: 1000, N: 1000, K: 1000}]
    configs:
      - {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 64, GROUP_M: 4, num_warps: 4, num_stages: 2}
      - {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, GROUP_M: 8, num_warps: 4, num_stages: 2}
    interpret: false
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    root = tmp_path_factory.mktemp("spills")
    (root / "m.yaml").write_text(MATRIX)
    out = root / "run"
    proc = run_cli("run", str(root / "m.yaml"), "--out", str(out), "-n", "0", "--static-only", "--fail-on", "spills")
    return proc, out


def test_a_spilling_config_is_a_finding_on_every_surface(ran) -> None:
    from harness.analysis.compare.diff import VERDICT_RANK

    proc, out = ran
    assert proc.returncode == 5, proc.stdout[-2000:] + proc.stderr[-2000:]  # the gate named it
    assert "harness: 2 configs: 1 spills, 2 not-checked · --fail-on spills: spills found · exit 5" in proc.stdout, (
        proc.stdout[-800:]
    )
    records = json.loads((out / "results.json").read_text())["records"]
    spilled = [r for r in records if any(f["resource"] == "spills" for f in r["flags"])]
    assert len(spilled) == 1 and spilled[0]["config"]["BLOCK_M"] == 128 and spilled[0]["fits"] is True
    md = (out / "report.md").read_text()
    assert "| yes, SPILLS |" in md and "| fits (spills on h100) |" in md, md[:3000]
    assert "<td class=spills" in (out / "report.html").read_text()  # never the green of a fit
    assert VERDICT_RANK["fits"] < VERDICT_RANK["spills"] < VERDICT_RANK["exceeds"]  # compare: a new spill is worse


def test_a_compiled_entrys_line_counts_its_configs_as_the_last_line_does(ran) -> None:
    """The compiled section's count of an entry's findings (on its target's line) is the gate's count of its rows, in
    the same words as the run's last line (plumbing: the real records above, put under a compiled entry's name)."""
    from harness.analysis import gate, inductor_graphs
    from harness.analysis.rows import build_rows
    from harness.model.build_facts import Inductor
    from harness.render import compiled
    from harness.results.store import load_results

    proc, out = ran
    _, records = load_results(out / "results.json")
    graph = ("matmul_kernel",)
    as_compiled = [
        dataclasses.replace(r, inductor=Inductor(entry="e", kernel="matmul_kernel", graph=graph, torch="t"))
        for r in records
    ]
    (found,) = inductor_graphs.of_records(as_compiled)
    assert found.counts == gate.count(build_rows(as_compiled)) == gate.count(build_rows(records))
    assert found.graphs[0].counts == found.counts  # one target: its line counts what the last line counts
    said = "  h100: 1 kernel(s), 2 config(s): 1 spills, 2 not-checked · checked 0 pass, 2 not checked"
    assert said in compiled.terminal([found]), compiled.terminal([found])
    assert f"2 configs: {gate.said(found.counts)} ·" in proc.stdout
