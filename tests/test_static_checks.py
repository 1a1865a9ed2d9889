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


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no scheduler autogroups on this kernel")
def test_the_background_work_yields_the_cores_to_the_tests() -> None:
    """The checks and the PyPI resolutions lead a session of their own (tests/beside.py), where the kernel's
    autogroups weigh a process's nice only within its session: their group must be niced too, or it takes a
    full share of the cores beside the tests' (a core of two, measured: docs/performance.md, 2026-12-06)."""
    import subprocess
    import sys

    code = "import beside; beside.lowest_priority(); print(open('/proc/self/autogroup').read().split()[-1])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent, capture_output=True, text=True,
                          start_new_session=True, check=True)  # fmt: skip
    assert proc.stdout.strip() == "19", proc.stdout + proc.stderr
