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
    def check(self) -> str:
        """The interpreter's word on the row's config: ``pass``, its failure, ``not checked`` (never a pass), or
        ``-`` where none was made. A hand-written kernel's comes from its interpreter record; a kernel Inductor
        generated carries one per target on its build (each target's graph checked on its own)."""
        if self.interpret is not None:
            return "pass" if self.interpret.status == "ok" else self.interpret.status
        made = [r.correctness for r in self.cells.values() if r.correctness is not None]
        if not made:
            return "-"
        if any(m.failed for m in made):
            return "mismatch"
        return "not checked" if any(m.unchecked or not m.checks for m in made) else "pass"

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
