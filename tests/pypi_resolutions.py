"""The installs tests/test_pypi_resolution.py checks, resolved by pip against plain PyPI, in the background.

pip spends these minutes mostly waiting on the network. Run inside the test module, they held one of the suite's
two workers for 80 to 250 s (by PyPI's day) with its core largely idle; started as soon as a session has collected
that module (tests/conftest.py), in a process of their own at the lowest priority, they overlap the compiles of the
other modules, and the module, run last, only reads what they found. ``python tests/pypi_resolutions.py FOLDER``
writes one JSON file per install into FOLDER, then ``done``; the module runs the same function in-process where
nothing started it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import beside
import tomllib

REPO = Path(__file__).resolve().parent.parent
PINS = ("34", "35", "36", "37", "38", "39")
PLAIN = ["--isolated", "--dry-run", "--ignore-installed", "--use-feature=fast-deps", "--disable-pip-version-check"]
DONE = "done"
#: names the folder into which tests/conftest.py started the resolutions when the session collected the module
ENV = "HARNESS_SUITE_PYPI"
UNREACHABLE = "unreachable"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}


def _python() -> str:
    """The suite's interpreter (its pip and tox), also when this file runs as a script of another one."""
    return os.environ.get("HARNESS_SUITE_PYTHON", sys.executable)


def resolve(*requirements: str) -> dict[str, str]:
    """What pip would install for ``requirements`` from plain PyPI: name -> version, or an AssertionError with pip's
    own words."""
    argv = [_python(), "-m", "pip", "install", *PLAIN, "-q", "--report", "-", *requirements]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=_env(), timeout=900)
    assert proc.returncode == 0, f"{requirements}: {proc.stderr[-3000:]}"
    report = json.loads(proc.stdout)
    return {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in report["install"]}


def project(*extras: str) -> list[str]:
    """The project's own requirements, as pyproject.toml lists them (not built: the same list pip would read)."""
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [*meta["dependencies"], *(r for e in extras for r in meta["optional-dependencies"][e])]


def tox_config() -> dict[str, dict[str, list[str]]]:
    """Each pin env's deps and commands_pre, as tox itself reads tox.ini."""
    tox = Path(_python()).parent / "tox"
    assert tox.exists(), "tox not installed (the test extra has it)"
    envs = ",".join(f"triton{p}" for p in PINS)
    out = subprocess.run(
        [str(tox), "config", "-e", envs, "-k", "deps", "commands_pre"],
        capture_output=True, text=True, cwd=REPO, check=True, timeout=120,
    ).stdout  # fmt: skip
    found: dict[str, dict[str, list[str]]] = {}
    env = key = ""
    for line in out.splitlines():
        if line.startswith("[testenv:"):
            env = line[len("[testenv:") : -1]
            found[env] = {"deps": [], "commands_pre": []}
        elif (setting := re.match(r"^(\w+) =(.*)$", line)) is not None:
            key, value = setting.group(1), setting.group(2).strip()
            if value and key in found[env]:
                found[env][key].append(value)
        elif line.startswith("  ") and key in ("deps", "commands_pre"):
            found[env][key].append(line.strip())
    return found


def tox_env(deps: list[str], commands_pre: list[str]) -> tuple[dict[str, str], list[str]]:
    """One pin env: its deps with the project's requirements, then any pip install its commands_pre makes."""
    resolved = resolve(*(d for d in deps if not d.startswith("-")), *project())
    overrides = [c for c in commands_pre if "pip install" in c]
    for command in overrides:  # triton39: the triton no torch asks for, over torch's, without dependencies
        wanted = re.findall(r"'?(triton==[\w.*]+)'?", command)
        assert "--no-deps" in command and wanted, command
        resolved |= resolve("--no-deps", *wanted)
    return resolved, overrides


def install_pin(pin: str, tmp: Path) -> dict[str, Any]:
    """``ci/install_pin.sh`` against plain PyPI: its exit code and output.

    The script is given the suite's own virtual environment (``--dry-run`` writes nothing into it), so that its pip
    is the suite's. A ``bin/python`` linked to it from another folder is no virtual environment: Python finds no
    ``pyvenv.cfg`` beside it and runs the base interpreter's pip, which may be years older (pip 23.2 downloads every
    wheel in full during a dry run, 30 CPU-seconds per resolution of torch's CUDA wheels)."""
    venv = Path(_python()).parent.parent
    if not (venv / "pyvenv.cfg").exists():  # the suite outside a virtual environment: its interpreter as it is
        venv = tmp / f"venv{pin}"
        (venv / "bin").mkdir(parents=True, exist_ok=True)
        if not (venv / "bin" / "python").exists():
            (venv / "bin" / "python").symlink_to(_python())
    proc = subprocess.run(
        ["bash", "ci/install_pin.sh", str(venv), pin, *PLAIN],
        capture_output=True, text=True, cwd=REPO, env=_env(), timeout=900,
    )  # fmt: skip
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def reachable() -> str | None:
    """None, or why PyPI cannot be reached from here."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=10).close()
    except OSError as exc:
        return f"PyPI is not reachable from here ({exc})"
    return None


def resolve_all(folder: Path) -> None:
    """Every resolution at once, each written as ``NAME.json`` ({"value": ...} or {"error": ...}), then ``done``."""
    folder.mkdir(parents=True, exist_ok=True)
    why = reachable()
    if why:
        (folder / UNREACHABLE).write_text(why)
        (folder / DONE).write_text("")
        return
    jobs: dict[str, Any] = {}
    with ThreadPoolExecutor(len(PINS) + 5) as pool:
        try:
            envs = tox_config()
        except (AssertionError, subprocess.SubprocessError) as exc:
            envs = {}
            (folder / "tox.json").write_text(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        for name, cfg in envs.items():
            jobs[name] = pool.submit(tox_env, cfg["deps"], cfg["commands_pre"])
        jobs["quick start"] = pool.submit(resolve, *project("cpu", "test"), "-c", "ci/constraints-cpu.txt")
        jobs["3.9.0"] = pool.submit(install_pin, "3.9.0", folder / "pins")  # the path no torch asks for
        jobs["merge"] = pool.submit(resolve, *project())  # merge / compare / accept: pip install -e .
        jobs["cpu extra"] = pool.submit(resolve, *project("cpu"))  # the wheel's extra, without the constraints
        for name, job in jobs.items():
            try:
                result: dict[str, Any] = {"value": job.result()}
            except Exception as exc:  # noqa: BLE001 - the test reports it as the failure of that install
                result = {"error": f"{type(exc).__name__}: {exc}"}
            (folder / f"{name}.json").write_text(json.dumps(result))
    (folder / DONE).write_text("")


def start(folder: Path) -> bool:
    """Start :func:`resolve_all` into ``folder`` beside the suite, once per folder (tests/beside.py); True if this call
    started it."""
    return beside.start(__file__, folder)


def results(folder: Path, timeout: float = 1500) -> dict[str, Any]:
    """What :func:`resolve_all` wrote into ``folder``, once it is done (waiting up to ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not (folder / DONE).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the PyPI resolutions in {folder} did not finish within {timeout:g} s")
        time.sleep(1)
    if (folder / UNREACHABLE).exists():
        return {UNREACHABLE: (folder / UNREACHABLE).read_text()}
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


if __name__ == "__main__":
    # started beside the tests: pip's CPU (about 90 CPU-seconds, most of it the impossible resolution of the 3.9.0
    # pin) at the lowest priority takes the moments the tests leave a core idle (a timeout they provoke, a child
    # they wait on) instead of competing with their compiles; the module, run last, waits for it if need be
    beside.lowest_priority()
    resolve_all(Path(sys.argv[1]))
