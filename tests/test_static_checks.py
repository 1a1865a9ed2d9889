"""ruff's lint and format check and mypy pass (ci/static_checks.sh, configured in pyproject.toml).

Run beside the rest of the suite since its start (tests/static_checks_beside.py); this module, run last, reads
their verdict, or runs them here and now where nothing started them (the module alone, outside the suite's
conftest)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from static_checks_beside import ENV, run, verdict


def test_ruff_and_mypy_pass(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = Path(os.environ[ENV]) if os.environ.get(ENV) else None
    if folder is None or not (folder / "started").exists():
        folder = tmp_path_factory.mktemp("static")
        run(folder)
    rc, log = verdict(folder)
    assert rc == 0, f"ci/static_checks.sh exited {rc}:\n{log[-6000:]}"
