"""Event pairs around kernel launches while a measurement asks for them: the autotuner's ``run`` that
:mod:`harness.intake.inductor.inductor_spec` wraps brackets each launch here, and :mod:`harness.device.graph_time`
reads the pairs of one call. Here, below both, so neither stage imports the other."""

from __future__ import annotations

from typing import Any, Callable

#: while a measurement runs: the current call's list of (kernel name, start event, end event), one per launch
marks: list[list[tuple[str, Any, Any]]] = []


def bracket(name: str, launch: Callable[[], Any]) -> Any:
    """``launch()``, with a CUDA event pair around it when a measurement is running."""
    if not marks:
        return launch()
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    out = launch()
    end.record()
    marks[-1].append((name, start, end))
    return out
