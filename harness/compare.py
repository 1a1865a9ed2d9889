"""Two runs side by side: per (kernel, dtype, shape, target, config) on-device medians, and what moved.

Used for timing fidelity (the same matrix twice) and for regressions (a Triton
bump, a new driver). Only records timed on a device take part; cases under
``min_us`` are shown but never judged, since launch noise dominates them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from tabulate import tabulate

from harness.records import Record


@dataclass(frozen=True)
class Delta:
    key: tuple[str, ...]
    label: str
    base_us: float
    new_us: float

    @property
    def change(self) -> float:
        return self.new_us / self.base_us - 1.0


class CompareInputError(Exception):
    """A timed record whose median cannot be compared; ``str()`` names each one."""


def _median(r: Record) -> float | None:
    timing = r.runtime.get("timing") if isinstance(r.runtime, dict) else None
    value = timing.get("median_us") if isinstance(timing, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def _timed(records: list[Record], side: str) -> dict[tuple[str, ...], Record]:
    out, bad = {}, []
    for r in records:
        # a config timed only in the tuner's screen (a tenth of the samples) is not judged
        if r.mode == "compile" and isinstance(r.runtime, dict) and r.runtime.get("status") == "ok" \
                and r.runtime.get("stage") != "screen":
            if _median(r) is None:
                timing = r.runtime.get("timing")
                bad.append(f"{side}: {r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}: timed 'ok' but its "
                           f"median is {timing.get('median_us') if isinstance(timing, dict) else 'missing'!r}")
                continue
            out[r.key()[:-2]] = r  # identity without Triton version and mode: compare across versions
    if bad:
        raise CompareInputError("\n".join(bad))
    return out


def deltas(base: list[Record], new: list[Record]) -> list[Delta]:
    """Matched on-device medians; raises :class:`CompareInputError` for a NaN, zero, negative or missing one."""
    a, b = _timed(base, "base"), _timed(new, "new")
    out = []
    for key in sorted(a.keys() & b.keys()):
        ra, rb = a[key], b[key]
        out.append(Delta(key, f"{ra.kernel} {ra.dtype} {ra.shape_id} {ra.target} {ra.config_id}",
                         _median(ra) or 0.0, _median(rb) or 0.0))
    return out


def render(rows: list[Delta], threshold: float, min_us: float) -> tuple[str, int]:
    """Table text and the number of judged rows whose change exceeds the threshold."""
    body, over = [], 0
    for d in rows:
        judged = max(d.base_us, d.new_us) >= min_us
        bad = judged and abs(d.change) > threshold
        over += bad
        body.append([d.label, f"{d.base_us:.1f}", f"{d.new_us:.1f}", f"{100 * d.change:+.2f}%",
                     "OVER" if bad else ("" if judged else "too short to judge")])
    table = tabulate(body, headers=["case / config", "base µs", "new µs", "change", ""], tablefmt="simple",
                     disable_numparse=True)
    return table, over
