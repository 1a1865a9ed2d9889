"""Long-format CSV of real records (an H200 run's): one row per record and metric, every string quoted safely."""

from __future__ import annotations

import csv
import dataclasses
import io

from helpers import DATA

from harness.analysis.findings import analyse
from harness.render import csv_export as export
from harness.results.store import load_results


def test_every_figure_is_a_row_and_reads_back() -> None:
    _, records = load_results(DATA / "h200_run_m")
    rows = list(csv.reader(io.StringIO(export.to_csv(analyse([], records)))))
    assert tuple(rows[0]) == export.COLUMNS and all(len(r) == len(export.COLUMNS) for r in rows)
    final = next(r for r in records if r.mode == "compile" and r.runtime is not None and r.runtime.stage == "final")
    median = [
        row for row in rows[1:] if row[6] == final.config_id and row[7] == "compile" and row[9] == "timing.median_us"
    ]
    assert [float(row[10]) for row in median] == [final.runtime.timing.median_us]
    tune = next(r for r in records if r.mode == "tune")
    speedup = [row for row in rows if row[7] == "tune" and row[9] == "baseline.torch.matmul.speedup"]
    assert float(speedup[0][10]) == tune.runtime.baselines["torch.matmul"].speedup
    assert any(row[9] == "resource.registers" for row in rows)


def test_hostile_names_survive_the_round_trip() -> None:
    _, records = load_results(DATA / "h200_run_m")
    name = 'evil,"kernel"\n<script>|`'
    odd = [dataclasses.replace(records[0], kernel=name)]
    rows = list(csv.reader(io.StringIO(export.to_csv(analyse([], odd)))))
    assert {row[0] for row in rows[1:]} == {name}
