"""``harness compare`` of two builds of the same configs whose code differs: each changed binary's line says how
its instruction mix moved — checked here against the PTX and AMDGCN files the two runs wrote, counted
independently — and the changes come grouped by kind, not one by one."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from helpers import REPO, run_cli, write_matrix

CONFIGS = "".join(f"      - {{BLOCK: {b}, num_warps: {w}}}\n" for b in (256, 1024) for w in (2, 4))


def _run(tmp: Path, label: str, barrier: bool) -> Path:
    source = (REPO / "tests" / "data" / "compile_cost" / "costly.py").read_text()
    if barrier:  # the same kernel with a barrier in its loop: the new "release" adds one per unrolled step
        source = source.replace("        acc = tl.sin(acc) * x + tl.cos(acc)\n",
                                "        acc = tl.sin(acc) * x + tl.cos(acc)\n        tl.debug_barrier()\n")  # fmt: skip
        assert "tl.debug_barrier()" in source
    (tmp / label).mkdir()
    (tmp / label / "costly.py").write_text(source)
    matrix = write_matrix(
        tmp / label / "m.yaml",
        "name: evidence\ntargets: [h100, mi300x]\nkernels:\n  costly:\n    source: costly.py:SPEC\n"
        f"    dtypes: [fp32]\n    shapes: [{{N: 1048576}}]\n    interpret: false\n    configs:\n{CONFIGS}",
    )
    proc = run_cli("run", str(matrix), "--out", str(tmp / label / "run"), "-n", "0", "--static-only")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return tmp / label / "run"


def _column(record: dict) -> str:
    env = record["environment"]
    return record["target"] if env == "default" else f"{record['target']}@{env}"


def _barriers(run: Path, record: dict) -> int:
    """Counted in the artifact itself, not from the record: bar.sync in the PTX, s_barrier in the AMDGCN."""
    kind, rx = ("ptx", r"^\s*bar(?:rier)?\.sync") if record["vendor"] == "nvidia" else ("amdgcn", r"^\s*s_barrier")
    return len(re.findall(rx, (run / record["artifacts"][kind]["path"]).read_text(), re.M))


def test_changed_binaries_carry_their_instruction_mix_and_come_grouped(tmp_path: Path) -> None:
    base, new = _run(tmp_path, "base", False), _run(tmp_path, "new", True)
    proc = run_cli("compare", str(base), str(new), "--markdown", str(tmp_path / "compare.md"),
                   "--json", str(tmp_path / "compare.json"), "--diffs", str(tmp_path / "diffs"))  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads((tmp_path / "compare.json").read_text())
    records = {
        side: {(_column(r), r["config_id"]): r for r in json.loads((run / "results.json").read_text())["records"]}
        for side, run in (("base", base), ("new", new))
    }
    code = [c for c in doc["changes"] if c["kind"] == "code"]
    assert len(code) == len(records["new"]) == 12  # 4 configs x (h100, mi300x, mi300x@async-copy), every binary
    for change in code:
        column, config_id = change["label"].split()[-2:]
        a, b = (
            _barriers(base, records["base"][(column, config_id)]),
            _barriers(new, records["new"][(column, config_id)]),
        )
        assert b > a and f"barriers {a}->{b}" in change["detail"], (change, a, b)
    # grouped: a line per target column and kind of change (which mix figures went up, which down)
    text = (tmp_path / "compare.md").read_text()
    assert "## Changes by kind" in text
    lines = [g for g in doc["groups"] if g["what"].startswith("changed binary:") and "barriers" in g["what"]]
    assert {g["column"] for g in lines} == {"h100", "mi300x", "mi300x@async-copy"}
    # a binary whose registers moved too has a signature of its own: a group needs two alike
    assert 8 <= sum(g["count"] for g in lines) <= 12 and all(g["kernels"] == [["costly", g["count"]]] for g in lines)
    assert "changes by kind" in proc.stdout and "config(s) changed binary:" in proc.stdout
    # each changed binary's TTGIR and its vendor's assembly diffed, one click away from its row: the added barriers
    assert "wrote 24 IR diff(s) of 12 changed binaries" in proc.stderr, proc.stderr
    links = re.findall(r"\[(ttgir|ptx|amdgcn)\]\((diffs/[^)]+)\)", text)
    assert len(links) == 24 and {k for k, _ in links} == {"ttgir", "ptx", "amdgcn"}
    for kind, link in links:
        added = [ln for ln in (tmp_path / unquote(link)).read_text().splitlines() if ln.startswith("+")]
        barrier = {"ttgir": "gpu.barrier", "ptx": "bar.sync", "amdgcn": "s_barrier"}[kind]
        assert any(barrier in ln for ln in added), (kind, link)
