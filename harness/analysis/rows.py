"""The comparison's rows: one per (kernel, dtype, shape, config, Triton), a record per target column, the
interpreter's record beside them, and the row's verdict (:mod:`harness.analysis.verdicts`) decided once."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from harness.analysis import verdicts
from harness.model.ids import config_key
from harness.model.records import Record


@dataclass(frozen=True)
class Row:
    kernel: str
    dtype: str
    shape_id: str
    config_id: str
    origin: str
    triton: str
    cells: dict[str, Record]  # target[@environment] -> record
    interpret: Record | None
    judged: verdicts.RowVerdict

    @property
    def verdict(self) -> str:
        return self.judged.text

    @property
    def asymmetric(self) -> bool:
        return self.judged.asymmetric


def build_rows(records: list[Record]) -> list[Row]:
    interp: dict[tuple[str, ...], Record] = {}
    groups: dict[tuple[str, ...], dict[str, Record]] = defaultdict(dict)
    for r in records:
        if r.mode == "interpret":
            interp[(r.kernel, r.dtype, r.triton, config_key(r.meta))] = r
        elif r.mode == "compile":
            groups[verdicts.group_key(r)][r.column] = r
    judged = verdicts.judge(r for cells in groups.values() for r in cells.values())
    rows = []
    for key, cells in groups.items():
        first = next(iter(cells.values()))
        rows.append(
            Row(
                first.kernel,
                first.dtype,
                first.shape_id,
                first.config_id,
                first.origin,
                first.triton,
                cells,
                interp.get((first.kernel, first.dtype, first.triton, config_key(first.meta))),
                judged[key],
            )
        )
    return rows
