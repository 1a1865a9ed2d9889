"""No process the harness started is alive after it exits, whichever way it exits.

The fault: Ctrl-C while the matrix was read left the callback probe's child (a session of its own) running for
ever, parented to init; a SIGKILL or a CI time limit did the same to any busy worker. Here user code blocks in the
callback probe (``harness validate``) and in a compile worker (``harness run``), each after starting a process of
its own (a grandchild of the harness); the harness alone is then sent SIGINT, SIGTERM or SIGKILL, or run under
``timeout``. Every process started is found by a tag in its environment, which children inherit whatever session
or process group they are in; none may be left a few seconds after the harness is gone, nor the scratch folders
made for them in the temporary folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers import DATA, REPO, tagged_processes

# the worker processes as every user's run starts them: fresh interpreters, not the suite's zygote
pytestmark = pytest.mark.usefixtures("no_zygote")


def _tagged(tag: str) -> list[int]:
    return tagged_processes(tag)


def _wait_for(predicate, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def _matrix(path: Path, attr: str) -> Path:
    path.write_text(
        f"name: linger\ntargets: [h100]\nkernels:\n  linger:\n    source: {DATA / 'lingering_kernel.py'}:{attr}\n"
        "    dtypes: [fp32]\n    shapes: [{N: 64}]\n    interpret: false\n"
    )
    return path


CASES = [
    (how, command, attr)
    for how in ("SIGINT", "SIGTERM", "SIGKILL", "timeout")
    for command, attr in (("validate", "CONFIG_OK"), ("run", "RUNTIME"))
    if (how, command) != ("timeout", "validate")  # timeout(1) sends SIGTERM: the validate case is the one above
]


@pytest.mark.parametrize(("how", "command", "attr"), CASES, ids=[f"{c}-{h}" for h, c, _ in CASES])
def test_no_child_outlives_the_harness(tmp_path: Path, how: str, command: str, attr: str) -> None:
    tag = f"HARNESS_LIFELINE_TEST={uuid.uuid4().hex}"
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TRITON_CACHE_DIR=str(tmp_path / "tc"),
               HARNESS_CACHE_DIR=str(tmp_path / "hc"), TMPDIR=str(tmp_path / "tmp"))  # fmt: skip
    env[tag.split("=")[0]] = tag.split("=")[1]
    env.pop("TRITON_INTERPRET", None)
    argv = [sys.executable, "-m", "harness", command, str(_matrix(tmp_path / "m.yaml", attr))]
    argv += ["--out", str(tmp_path / "run"), "-n", "0", "--static-only"] if command == "run" else []
    if how == "timeout":  # coreutils: on its limit (or a TERM of its own) it sends SIGTERM to the harness and its group
        argv = ["timeout", "600", *argv]
    harness = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        # the user code is blocking once its own child, `sleep 600`, exists (three processes or more carry the tag)
        assert _wait_for(lambda: any(_comm(p) == "sleep" for p in _tagged(tag)), 120), "user code never started"
        # to the harness's pid alone, not its group; timeout(1) is told to end its command as at its limit, which
        # spares the test waiting for a limit long enough for a loaded machine to reach the user code
        harness.send_signal(signal.SIGTERM if how == "timeout" else getattr(signal, how))
        harness.wait(timeout=60)
        assert _wait_for(lambda: not _tagged(tag), 10), [(_comm(p), p) for p in _tagged(tag)]
        # the folders made for the children went with them (the lifeline removes them where the harness was
        # killed); a SIGKILLed harness leaves only its own
        left = sorted(p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("harness-"))
        assert [n for n in left if not (how == "SIGKILL" and n.startswith("harness-facts-"))] == [], left
    finally:
        for pid in _tagged(tag):
            os.kill(pid, signal.SIGKILL)
        harness.kill()
        harness.wait()


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"
