"""Results in long format for the tools CI systems and notebooks have: one CSV row per record × metric.

Long rather than wide so that a new resource or runtime figure is a new row, never a new column
that breaks a reader: ``kernel, dtype, shape, target, environment, triton, config_id, mode, host,
metric, value``. Static metrics come from the build (status, fits, every resource, compile time);
on-device metrics from the runtime (status, median and quantiles, rates, launch parity) and, for a
tuned case, its roof (harness.analysis.roofline: bound, rate, share of the peak) and each baseline's median and
the speedup over it.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Iterator

from harness.analysis.findings import Findings
from harness.model.records import Record
from harness.model.runtime import Runtime
from harness.render.escaping import CONTROL

COLUMNS = (
    "kernel",
    "dtype",
    "shape",
    "target",
    "environment",
    "triton",
    "config_id",
    "mode",
    "host",
    "metric",
    "value",
)
RUNTIME = ("status", "launch_parity", "tflops", "gbps", "median_us")
TIMING = ("median_us", "p20_us", "p80_us", "reps")


def _metrics(r: Record, found: Findings) -> Iterator[tuple[str, Any]]:
    yield "status", r.status
    if r.mode == "compile":
        yield "fits", r.fits
        yield "compile_s", r.compile_s
        if r.compile_cpu_s is not None:  # a compile made in this run (not a cache load)
            yield "compile_cpu_s", r.compile_cpu_s
        yield "compile_cache", r.compile_cache
        for name, value in sorted(r.resources.to_json().items()):
            yield f"resource.{name}", value
    rt = r.runtime or Runtime()
    for name in RUNTIME:
        if getattr(rt, name) is not None:
            yield f"runtime.{name}", getattr(rt, name)
    for name in TIMING:
        value = getattr(rt.timing, name) if rt.timing is not None else None
        if value is not None:
            yield f"timing.{name}", value
    roof = found.roof(r)
    if roof is not None:  # the analysis's roof: the same figure every report shows
        yield "roof.bound", roof.bound
        yield "roof.rate", roof.rate
        yield "roof.unit", roof.unit
        yield "roof.peak", roof.peak
        yield "roof.pct_of_peak", roof.pct
        yield "roof.pct_of_copy_bw", roof.copy_pct
        yield "roof.device", roof.device
        yield "roof.math", roof.math
    for base, b in sorted((rt.baselines or {}).items()):
        if b.status == "ok":
            yield f"baseline.{base}.median_us", b.timing.median_us if b.timing is not None else None
            yield f"baseline.{base}.speedup", b.speedup


def rows(found: Findings) -> Iterator[list[Any]]:
    for r in sorted(
        found.records, key=lambda r: (r.kernel, r.dtype, r.shape_id, r.column, r.triton, r.config_id, r.mode)
    ):
        head = [r.kernel, r.dtype, r.shape_id, r.target, r.environment, r.triton, r.config_id, r.mode, r.host]
        for metric, value in _metrics(r, found):
            if value is not None:
                yield head + [metric, value]


def to_csv(found: Findings) -> str:
    """The whole table as CSV text (quoting by the csv module: names with commas, quotes or newlines survive)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([_inert(c) for c in row] for row in rows(found))
    return buf.getvalue()


def _inert(cell: Any) -> Any:
    """A text cell without control characters; one a spreadsheet would run as a formula (``=``, ``+``, ``-``,
    ``@``, tab, CR first) gets a leading apostrophe, as spreadsheets expect; numbers stay numbers."""
    if not isinstance(cell, str):
        return cell
    if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
        cell = "'" + cell
    return CONTROL.sub("", cell)
