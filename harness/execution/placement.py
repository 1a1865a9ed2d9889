"""Which local GPU this process's cases run on: the pytest worker's own device (one GPU per xdist worker, from the
vendor tools: no torch import, no GPU context) and whether a target's cases run there at all (the model must
match, or ``--device-as`` maps it)."""

from __future__ import annotations

import os

from harness.device.detection import local_gpus, match, pick_device
from harness.model.runtime import GpuSlot
from harness.model.targets import Target


def this_process_gpu() -> GpuSlot | None:
    """The GPU this pytest process owns (``PYTEST_XDIST_WORKER`` picks one of several), or None."""
    return pick_device(os.environ.get("PYTEST_XDIST_WORKER"), local_gpus())


def gpu_for(target: Target, device_as: tuple[str, ...]) -> tuple[GpuSlot | None, str]:
    """The GPU ``target``'s cases run on here (None when none), and a note for the records: why a local GPU of the
    same architecture does not run them, or that ``--device-as`` mapped it."""
    gpu = this_process_gpu()
    runs, note = match(target, gpu, device_as)
    return (gpu if runs else None), note
