"""Golden outputs: what the reports and the gate print for fixed stored runs, byte for byte.

A static run (triton 3.6, no GPU), the stored H200 nightly, and a pair of stored H200 gate runs are rendered by
``harness report`` (terminal, report.md, report.html, vendor-eval.md, CSV) and ``harness compare`` (terminal,
markdown, JSON). A change that moves code around must leave every byte as it was; a change that means to alter
an output regenerates the files with ``HARNESS_UPDATE_GOLDEN=1 pytest tests/test_golden_outputs.py`` and says
why in its commit message.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest
from helpers import DATA

from harness import cli

GOLDEN = DATA / "golden"
UPDATE = os.environ.get("HARNESS_UPDATE_GOLDEN") == "1"
RUNS = {
    "static36": DATA / "static_triton36",
    "nightly": DATA / "h200_nightly",
    "gate_g1": DATA / "h200_gate" / "g1",
    "gate_g2": DATA / "h200_gate" / "g2",
}


def _copy_in(name: str, into: Path) -> Path:
    """The stored run as a plain results.json in a fixed place (the reports link run directories relatively)."""
    source = RUNS[name]
    target = into / "in" / name
    target.mkdir(parents=True)
    plain, packed = source / "results.json", source / "results.json.gz"
    if plain.is_file():
        shutil.copyfile(plain, target / "results.json")
    else:
        (target / "results.json").write_bytes(gzip.decompress(packed.read_bytes()))
    return target


def _check(produced: dict[str, str], folder: str) -> None:
    """Each output equal to its golden file (kept gzip-compressed: the nightly's HTML page is large)."""
    where = GOLDEN / folder
    if UPDATE:
        where.mkdir(parents=True, exist_ok=True)
        for name, text in produced.items():
            (where / f"{name}.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        return
    for name, text in produced.items():
        expected = gzip.decompress((where / f"{name}.gz").read_bytes()).decode()
        assert text == expected, f"{folder}/{name} differs from its golden file (regenerate only on purpose)"


@pytest.mark.parametrize("run", ["static36", "nightly"])
def test_report_outputs_are_unchanged(
    run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HARNESS_HISTORY", raising=False)
    monkeypatch.chdir(tmp_path)
    source = _copy_in(run, tmp_path)
    out = tmp_path / "out"
    code = cli.main(
        [
            "report",
            str(source.relative_to(tmp_path)),
            "--out",
            "out/report.md",
            "--vendor-eval",
            "--csv",
            "out/records.csv",
        ]
    )
    terminal = capsys.readouterr().out
    assert code == 0
    _check(
        {
            "terminal.txt": terminal,
            "report.md": (out / "report.md").read_text(),
            "report.html": (out / "report.html").read_text(),
            "vendor-eval.md": (out / "vendor-eval.md").read_text(),
            "records.csv": (out / "records.csv").read_text(),
        },
        run,
    )


def test_compare_outputs_are_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    base, new = _copy_in("gate_g1", tmp_path), _copy_in("gate_g2", tmp_path)
    code = cli.main(
        [
            "compare",
            str(base.relative_to(tmp_path)),
            str(new.relative_to(tmp_path)),
            "--markdown",
            "compare.md",
            "--json",
            "compare.json",
        ]
    )
    terminal = capsys.readouterr().out
    _check(
        {
            "exit_code.txt": f"{code}\n",
            "terminal.txt": terminal,
            "compare.md": (tmp_path / "compare.md").read_text(),
            "compare.json": (tmp_path / "compare.json").read_text(),
        },
        "compare_g1_g2",
    )
