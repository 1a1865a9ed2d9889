"""The vendor evaluation as markdown (``harness report --vendor-eval``): the cases :mod:`harness.analysis.vendor_eval`
evaluated, one table row each."""

from __future__ import annotations

from harness.analysis.vendor_eval import CaseEval
from harness.render.escaping import md


def markdown(evals: list[CaseEval]) -> str:
    if evals and not any(ev.devices for ev in evals):
        return _static(evals)
    lines = [
        "# Vendor evaluation",
        "",
        "The same kernels tuned separately on each device, on the matrix's shapes. Rate: against the case's",
        "roof on that device — GB/s and the share of the HBM peak when the kernel's FLOP per byte is below",
        "the device's ridge point (memory-bound), else TFLOP/s and the share of its dtype's peak; the peaks",
        "are the catalogue's for the device that ran (docs/figures.md). A vendor-specific winner is a config",
        "that does not fit the other targets; one vendor only: configs of the case that fit one vendor's targets",
        "and not the other's. Not fitting: configs of the case that exceed a limit or failed.",
        "",
        "| kernel | dtype | shape | triton | device: winner, median, rate, roof, % of peak | between devices |"
        " winner elsewhere | one vendor only | static only | not fitting (per target) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for ev in evals:
        cells = ["<br>".join(md(line) for line in lines) for lines in ev.cells().values()]
        head = [md(v) for v in (ev.kernel, ev.dtype, ev.shape_id, ev.triton)]
        lines.append("| " + " | ".join(head + cells) + " |")
    return "\n".join(lines) + "\n"


STATIC_NOTE = (
    "What a run without a GPU can compare: per case and target, how many of the case's configs fit (each binary "
    "once) and what they cost — registers (median, max), the most shared memory / LDS, how many spill; the "
    "configs only one vendor takes; those that exceed a limit or failed. Timings need a GPU run."
)


def _static(evals: list[CaseEval]) -> str:
    lines = ["# Vendor evaluation (static)", "", STATIC_NOTE, ""]
    lines += ["| kernel | dtype | shape | triton | per target | one vendor only | not fitting (per target) |"]
    lines += ["| --- | --- | --- | --- | --- | --- | --- |"]
    for ev in evals:
        cells = ["<br>".join(md(line) for line in lines) for lines in ev.static_cells().values()]
        head = [md(v) for v in (ev.kernel, ev.dtype, ev.shape_id, ev.triton)]
        lines.append("| " + " | ".join(head + cells) + " |")
    return "\n".join(lines) + "\n"
