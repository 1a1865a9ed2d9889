"""The roof of every measured figure, on a stored H200 nightly run of our own (docs/performance.md, run AF):
memory-bound kernels in GB/s against the HBM peak, compute-bound ones in TFLOP/s against the peak of their dtype,
always the peaks of the device that ran; every report shows the same figure. Checked against arithmetic on the
record by hand."""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
from pathlib import Path

import pytest
from helpers import DATA, call_cli

from harness.analysis import figures
from harness.analysis.findings import analyse
from harness.analysis.roofline import roof_of
from harness.render import csv_export, terminal, vendor_eval
from harness.results.store import load_results

NIGHTLY = DATA / "h200_nightly"  # harness run matrices/nightly.yaml --targets h200 on the H200, 2026-12-01
H200_HBM_GBPS, H200_FP16, H200_FP8 = 4800.0, 989.4, 1978.9  # the catalogue's H200 entry (datasheet)
MEMORY_KERNELS = {"vector_add", "softmax", "rmsnorm", "cross_entropy", "fused_activation"}


@pytest.fixture(scope="module")
def tunes() -> list:
    _, records = load_results(NIGHTLY)
    out = [r for r in records if r.mode == "tune" and r.status == "ok"]
    assert len(out) == 52 and {r.kernel for r in out} >= MEMORY_KERNELS | {"matmul", "flash_attention", "moe_gemm"}
    return out


def _by_hand(r) -> tuple[str, float, float]:
    """(unit, rate, % of peak) from the record's own models and median, with the H200's datasheet peaks."""
    flops, nbytes, us = r.runtime.model.flops, r.runtime.model.bytes, r.runtime.median_us
    peak = H200_FP8 if r.dtype.startswith("fp8") else H200_FP16
    if flops / nbytes < peak / 4.8:  # FLOP per byte below the ridge (TFLOP/s over TB/s)
        gbps = nbytes / us / 1e3
        return "GB/s", gbps, 100 * gbps / H200_HBM_GBPS
    tflops = flops / us / 1e6
    return "TFLOP/s", tflops, 100 * tflops / peak


def test_memory_bound_kernels_read_gbps_of_the_hbm_peak(tunes: list) -> None:
    for r in (t for t in tunes if t.kernel in MEMORY_KERNELS):
        roof = roof_of(r)
        unit, rate, pct = _by_hand(r)
        assert (roof.unit, roof.bound, roof.device) == ("GB/s", "memory", "h200") == (unit, "memory", "h200")
        assert roof.rate == pytest.approx(rate) and roof.pct == pytest.approx(pct)
        assert 40 <= roof.pct <= 100, (r.kernel, r.shape_id, roof.pct)
        assert roof.copy_pct == pytest.approx(100 * rate / (1000 * r.runtime.copy_tbps))


def test_gemms_and_attention_read_tflops_of_their_dtypes_peak(tunes: list) -> None:
    compute = [
        t for t in tunes if t.kernel in ("matmul", "matmul_tma", "flash_attention", "attention_desc", "moe_gemm")
    ]
    seen = set()
    for r in compute:
        roof = roof_of(r)
        unit, rate, pct = _by_hand(r)
        assert roof.unit == unit and roof.rate == pytest.approx(rate) and roof.pct == pytest.approx(pct)
        if r.shape.get("M") == 16:  # decode GEMM: 16 FLOP per byte, below the ridge: memory-bound
            assert roof.bound == "memory" and 40 <= roof.pct <= 100
            continue
        assert roof.bound == "compute" and roof.peak == (H200_FP8 if r.dtype == "fp8" else H200_FP16)
        assert roof.math == ("fp8" if r.dtype == "fp8" else r.dtype) and 0 < roof.pct < 100
        seen.add(roof.math)
    assert seen == {"fp16", "bf16", "fp8"}


def test_device_as_takes_the_peaks_of_the_device_that_ran(tunes: list) -> None:
    """--device-as h100 on an H200 maps winners, never peaks: the roof is still the H200's."""
    r = copy.deepcopy(next(t for t in tunes if t.kernel == "vector_add"))
    own = roof_of(r)
    mapped_as = r.runtime.updated(device_as="mapped by --device-as h100: runs on the local NVIDIA H200")
    r = dataclasses.replace(r, target="h100", runtime=mapped_as)
    mapped = roof_of(r)
    assert mapped.device == "h200" and mapped.pct == own.pct and mapped.peak == H200_HBM_GBPS
    h20 = "NVIDIA H20"  # not in the catalogue: says so
    h20_runtime = r.runtime.updated(device=r.runtime.device.updated(name=h20), gpu=r.runtime.gpu.updated(name=h20))
    r = dataclasses.replace(r, runtime=h20_runtime)
    assert "not in the catalogue: h100's peaks" in roof_of(r).note


def test_every_report_reads_the_same_figure(tunes: list, tmp_path: Path) -> None:
    _, records = load_results(NIGHTLY)
    measured = {(m.kernel, m.dtype, m.shape_id): m for m in figures.measured(records)}
    evals = vendor_eval.markdown(list(analyse([], records).evaluations))
    rows = list(csv.DictReader(io.StringIO(csv_export.to_csv(analyse([], records)))))
    proc = call_cli("report", str(NIGHTLY), "--out", str(tmp_path / "report.md"), "--vendor-eval", "--wide")
    assert proc.returncode == 0, proc.stderr
    report, page = (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()
    for r in tunes:
        roof = roof_of(r)
        assert measured[(r.kernel, r.dtype, r.shape_id)].roof == roof
        assert roof.label in evals and roof.label in (tmp_path / "vendor-eval.md").read_text()
        assert roof.share_text in report and roof.share_text.replace("&", "&amp;") in page
        pct = next(
            x
            for x in rows
            if x["kernel"] == r.kernel
            and x["dtype"] == r.dtype
            and x["shape"] == r.shape_id
            and x["mode"] == "tune"
            and x["metric"] == "roof.pct_of_peak"
        )
        assert float(pct["value"]) == pytest.approx(roof.pct)
    lines = "\n".join(terminal.device_lines(analyse([], records)))
    assert "vector_add: 2 of 2 case(s) tuned on h200" in lines and "; HBM 91%" in lines
    assert "% of TFLOP" not in lines and "0% of peak" not in report
