"""``harness compare`` of two real Triton pins: each changed binary's instruction-mix deltas match the artifacts, the
changes come grouped, and each linked IR diff shows the change.

The two runs are stored (tests/data/pin_evidence): ``tests/data/pin_evidence/matrix.yaml`` cross-compiled on
2026-12-02 with ``harness run --static-only -n 0`` under triton 3.4.0 (the tox env ``triton34``: torch 2.13.0+cpu)
and triton 3.6.0 (the suite's), results.json and the TTGIR, PTX and AMDGCN of each build kept (binaries left out:
compare reads their hashes from the records). Between the two releases mi300x's async-copy GEMMs stop issuing
``global_load_lds`` (the LDS-direct loads) and load through registers instead; h100 gains barriers. The counts are
taken here from the assembly itself, not from the records.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from helpers import DATA, call_cli

RUNS = DATA / "pin_evidence"
#: the lines counted in each build's own assembly, per vendor and figure
COUNTED = {
    "nvidia": {"barriers": r"^\s*(?:@!?%p\d+\s+)?bar(?:rier)?\.(?:sync|arrive)", "wgmma": r"^\s*wgmma\.mma_async"},
    "amd": {
        "async_copies": r"^\s*(?:global|buffer)_load_lds",
        "global_loads": r"^\s*(?:global|buffer)_load(?!_lds)",
        "shared_stores": r"^\s*ds_(?:write|store)",
        "barriers": r"^\s*s_barrier",
        "mfma": r"^\s*v_mfma_",
    },
}


def _records(run: Path) -> dict[tuple[str, str], dict]:
    doc = json.loads((run / "results.json").read_text())
    column = lambda r: r["target"] if r["environment"] == "default" else f"{r['target']}@{r['environment']}"  # noqa: E731
    return {(column(r), r["config_id"]): r for r in doc["records"]}


def _count(run: Path, record: dict, figure: str) -> int | None:
    kind = "ptx" if record["vendor"] == "nvidia" else "amdgcn"
    rx = COUNTED[record["vendor"]].get(figure)
    return len(re.findall(rx, (run / record["artifacts"][kind]["path"]).read_text(), re.M)) if rx else None


def test_two_pins_changed_binaries_show_their_mix_deltas_grouped_with_diffs(tmp_path: Path) -> None:
    old, new = _records(RUNS / "triton34"), _records(RUNS / "triton36")
    assert {r["triton"] for r in old.values()} == {"3.4.0"} and {r["triton"] for r in new.values()} == {"3.6.0"}
    proc = call_cli("compare", str(RUNS / "triton34"), str(RUNS / "triton36"), "--json", str(tmp_path / "c.json"),
                   "--markdown", str(tmp_path / "c.md"), "--diffs", str(tmp_path / "diffs"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    code = [c for c in json.loads((tmp_path / "c.json").read_text())["changes"] if c["kind"] == "code"]
    assert len(code) == len(new) == 6  # every binary changed between the releases
    checked = 0
    for change in code:
        column, config_id = change["label"].split()[-2:]
        a, b = old[(column, config_id)], new[(column, config_id)]
        for figure, before, after in re.findall(r"(\w+) (\d+)->(\d+)", change["detail"]):
            counted = (_count(RUNS / "triton34", a, figure), _count(RUNS / "triton36", b, figure))
            if counted != (None, None):
                assert counted == (int(before), int(after)), (change["label"], figure, counted)
                checked += 1
        for figure in COUNTED[a["vendor"]]:  # and a figure the line leaves out did not move
            if not re.search(rf"\b{figure} \d+->", change["detail"]):
                assert _count(RUNS / "triton34", a, figure) == _count(RUNS / "triton36", b, figure), (change, figure)
    assert checked >= 10
    # the async-copy GEMMs: LDS-direct loads gone, as the AMDGCN shows and the group says once for both configs
    lds = [c for c in code if "mi300x@async-copy" in c["label"]]
    assert len(lds) == 2 and all(re.search(r"async_copies (\d+)->0", c["detail"]) for c in lds)
    assert re.search(r"2 config\(s\) changed binary: .*async_copies.* down on mi300x@async-copy", proc.stdout)
    markdown = (tmp_path / "c.md").read_text()
    linked = re.findall(r"\]\((diffs/[^)]+\.amdgcn\.diff)\)", markdown)
    async_diffs = [tmp_path / unquote(p) for p in linked if "async-copy" in p]  # a link's @ is %40
    assert len(async_diffs) == 2, linked
    for diff in async_diffs:
        removed = [ln for ln in diff.read_text().splitlines() if ln.startswith("-") and "_load_lds" in ln]
        assert removed, diff
