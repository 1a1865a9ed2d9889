"""The default matrix run cold and then warm (read by tests/test_smoke_matrix.py; its Triton cache serves the verdict
module's builds), started in the background as soon as a session has collected the smoke module.

Its compiles are the suite's largest single piece of work (about 100 CPU-seconds). Run in the module's fixture
they held one of the two xdist workers for two minutes, while later the tests leave a core idle for about 70 s
in all (limits they provoke, children they wait on). In a process of its own at a lower priority the runs take
those moments while both workers go on with other modules; the smoke module waits for what is left.
``python tests/background_smoke.py FOLDER`` writes ``runs.json`` and then ``done`` into FOLDER; the fixture calls
:func:`run_both` itself where nothing started it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: names the folder the session's controller made for the runs (tests/conftest.py)
ENV = "HARNESS_SUITE_SMOKE"
DONE = "done"
NICE = 10  # below the tests, above pip's background resolutions (nice 19)


def run_env(folder: Path) -> dict[str, str]:
    """What the runs set: their own caches, empty at the start (Triton's too: the cold run compiles every binary)."""
    return {
        "TRITON_CACHE_DIR": str(folder / "triton-cache"),
        "HARNESS_CACHE_DIR": str(folder / "harness-cache"),
        "HARNESS_RESULT_CACHE": "1",  # as a user's runs have it: the warm run takes unchanged jobs from it
        # both cores where the tests leave them free (an xdist worker's child would take its one share)
        "HARNESS_COMPILE_WORKERS": "2",
    }


def run_both(folder: Path) -> None:
    """``harness run`` of the default matrix into ``folder/cold`` (``--wide``: the full tables), then again into
    ``folder/warm``; each one process (``-n 0``), so that the warm run measures the caches, not xdist's start-up."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.pop("TRITON_INTERPRET", None)
    env.update(run_env(folder))
    said: dict[str, Any] = {}
    for label in ("cold", "warm"):
        wide = ["--wide"] if label == "cold" else []
        start = time.perf_counter()
        argv = [sys.executable, "-m", "harness", "run", "--out", str(folder / label), "-n", "0", *wide]
        proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False)
        said[label] = {"seconds": time.perf_counter() - start, "returncode": proc.returncode,
                       "stdout": proc.stdout, "stderr": proc.stderr[-5000:]}  # fmt: skip
        if proc.returncode:
            break
    (folder / "runs.json").write_text(json.dumps(said))
    (folder / DONE).write_text("")


def start(folder: Path) -> bool:
    """Start :func:`run_both` into ``folder`` in a process of its own, once per folder (the first caller of the
    suite's processes wins); True if this call started it."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(folder / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    with open(folder / "stderr", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, __file__, str(folder)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
        )  # fmt: skip
    (folder / "pid").write_text(str(proc.pid))
    return True


def results(folder: Path, timeout: float = 1800) -> dict[str, Any]:
    """What :func:`run_both` wrote into ``folder``, once it is done (waiting up to ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not (folder / DONE).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the default-matrix runs in {folder} did not finish within {timeout:g} s")
        time.sleep(0.5)
    return json.loads((folder / "runs.json").read_text())


if __name__ == "__main__":
    os.nice(NICE)
    run_both(Path(sys.argv[1]))
