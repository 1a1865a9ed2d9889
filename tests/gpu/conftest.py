"""GPU tests: run only where a GPU is present (CUDA or ROCm torch); skipped everywhere else."""

from __future__ import annotations

import pytest

from harness.device.detection import local_gpus


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if local_gpus():
        return
    skip = pytest.mark.skip(reason="no GPU on this host (nvidia-smi / rocminfo found none)")
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)
