"""Work a test module reads that runs beside the rest of the suite from the session's start (the PyPI
resolutions, the static checks): ``python SCRIPT FOLDER`` in a process and session of its own, started once per
folder by whichever of the suite's processes collects the module first (tests/conftest.py's ``BACKGROUND``)."""

from __future__ import annotations

import contextlib
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


def lowest_priority() -> None:
    """Take only the cores the tests leave idle: nice 19, for this process's own scheduling group too. The process
    leads a session of its own (:func:`start`), and where the kernel groups processes by session
    (``/proc/sys/kernel/sched_autogroup_enabled``, on by default) a process's nice weighs only within its session:
    a session at nice 19 still got a full group's share beside the tests' sessions, a core of two while it ran.
    """
    os.nice(19)
    with contextlib.suppress(OSError):  # no autogroups here (the file is absent): the process's nice is enough
        Path("/proc/self/autogroup").write_text("19")
