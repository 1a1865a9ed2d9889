"""Work a test module reads that runs beside the rest of the suite from the session's start (the PyPI
resolutions, the static checks): ``python SCRIPT FOLDER`` in a process and session of its own, started once per
folder by whichever of the suite's processes collects the module first (tests/conftest.py's ``BACKGROUND``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def start(script: str, folder: Path) -> bool:
    """Start ``script`` on ``folder`` unless a process already did; True if this call started it. The child's
    pid is written to ``FOLDER/pid`` (the controller ends its session), its stderr to ``FOLDER/stderr``."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(folder / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    proc = subprocess.Popen(
        [sys.executable, script, str(folder)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(folder / "stderr", "wb"),
        env=dict(os.environ, HARNESS_SUITE_PYTHON=sys.executable), start_new_session=True,
    )  # fmt: skip
    (folder / "pid").write_text(str(proc.pid))
    return True
