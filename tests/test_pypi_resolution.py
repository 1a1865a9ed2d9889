"""Every install the project tells people or CI to run resolves against plain PyPI, not only against this machine.

Each install is handed to pip itself (``pip install --isolated --dry-run``: no config file, no ``PIP_*`` variable,
so no local wheel and no extra index; PyPI only) and pip's own report says what it would install. Checked: each tox
env (its deps and commands_pre as tox itself reads them, with the project's dependencies), README's quick start and
``.ci/run`` (the project with ``[cpu,test]`` under ``ci/constraints-cpu.txt``), the triton-pin job's
``ci/install_pin.sh`` on a pin PyPI's torch asks for and on one none asks for, and that the workflows install
nothing else. ``--use-feature=fast-deps`` reads each wheel's metadata with HTTP range requests instead of
downloading torch wheels of about 900 MB while pip backtracks. Needs the network: without it the tests skip,
saying so.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest
import tomllib
import yaml
from helpers import REPO

pytestmark = pytest.mark.network  # pip against plain PyPI (skips, saying so, without it)

PINS = ("34", "35", "36", "37", "38", "39")
PLAIN = ["--isolated", "--dry-run", "--ignore-installed", "--use-feature=fast-deps", "--disable-pip-version-check"]


@pytest.fixture(scope="module", autouse=True)
def _pypi_reachable() -> None:
    try:
        socket.create_connection(("pypi.org", 443), timeout=10).close()
    except OSError as exc:
        pytest.skip(f"PyPI is not reachable from here ({exc}): the resolution against plain PyPI is not checked")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}


def _resolve(*requirements: str) -> dict[str, str]:
    """What pip would install for ``requirements`` from plain PyPI: name -> version, or an AssertionError with pip's
    own words."""
    argv = [sys.executable, "-m", "pip", "install", *PLAIN, "-q", "--report", "-", *requirements]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=_env(), timeout=900)
    assert proc.returncode == 0, f"{requirements}: {proc.stderr[-3000:]}"
    report = json.loads(proc.stdout)
    return {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in report["install"]}


def _project(*extras: str) -> list[str]:
    """The project's own requirements, as pyproject.toml lists them (not built: the same list pip would read)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *(r for e in extras for r in project["optional-dependencies"][e])]


def _tox_config() -> dict[str, dict[str, list[str]]]:
    """Each pin env's deps and commands_pre, as tox itself reads tox.ini."""
    tox = Path(sys.executable).parent / "tox"
    if not tox.exists():
        pytest.skip("tox not installed (the test extra has it)")
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


def _tox_env(deps: list[str], commands_pre: list[str]) -> tuple[dict[str, str], list[str]]:
    """One pin env: its deps with the project's requirements, then any pip install its commands_pre makes."""
    resolved = _resolve(*(d for d in deps if not d.startswith("-")), *_project())
    overrides = [c for c in commands_pre if "pip install" in c]
    for command in overrides:  # triton39: the triton no torch asks for, over torch's, without dependencies
        wanted = re.findall(r"'?(triton==[\w.*]+)'?", command)
        assert "--no-deps" in command and wanted, command
        resolved |= _resolve("--no-deps", *wanted)
    return resolved, overrides


def _install_pin(pin: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    venv = tmp / f"venv{pin}"  # the script's pip is this interpreter's: --dry-run writes nothing into it
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    return subprocess.run(
        ["bash", "ci/install_pin.sh", str(venv), pin, *PLAIN],
        capture_output=True, text=True, cwd=REPO, env=_env(), timeout=900,
    )  # fmt: skip


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[Any]]]:
    """Every resolution at once (pip waits on the network, not the CPU): tox envs, the quick start, the pin job."""
    envs = _tox_config()
    tmp = tmp_path_factory.mktemp("pins")
    with ThreadPoolExecutor(len(envs) + 5) as pool:
        jobs = {name: pool.submit(_tox_env, cfg["deps"], cfg["commands_pre"]) for name, cfg in envs.items()}
        jobs["quick start"] = pool.submit(_resolve, *_project("cpu", "test"), "-c", "ci/constraints-cpu.txt")
        jobs["3.9.0"] = pool.submit(_install_pin, "3.9.0", tmp)  # the path no torch asks for (the other: tox envs)
        jobs["merge"] = pool.submit(_resolve, *_project())  # merge / compare / accept: pip install -e .
        jobs["cpu extra"] = pool.submit(_resolve, *_project("cpu"))  # the wheel's extra, without the constraints
        yield jobs


def test_every_tox_pin_env_resolves_on_plain_pypi_with_its_triton(resolved: dict[str, Future[Any]]) -> None:
    names = sorted(n for n in resolved if n.startswith("triton"))
    assert names == [f"triton{p}" for p in PINS]
    seen = {}
    for name in names:
        found, overrides = resolved[name].result()
        pin = name.removeprefix("triton")
        assert found["triton"].startswith(f"{pin[0]}.{pin[1:]}."), (name, found["triton"])
        assert "torch" in found and "pyyaml" in found, name
        assert bool(overrides) == (pin == "39"), name  # only the release no torch asks for is laid over
        seen[name] = (found["torch"], found["triton"])
    print(seen)


def test_the_quick_start_and_ci_install_resolve_on_plain_pypi(resolved: dict[str, Future[Any]]) -> None:
    """README's quick start and .ci/run: ``-e '.[cpu,test]' -c ci/constraints-cpu.txt``."""
    readme = (REPO / "README.md").read_text()
    command = "pip install -q -e '.[cpu,test]' -c ci/constraints-cpu.txt"
    assert command in readme and command in (REPO / ".ci" / "run").read_text()
    found = resolved["quick start"].result()
    pinned = dict(
        line.split("==", 1) for line in (REPO / "ci" / "constraints-cpu.txt").read_text().splitlines() if "==" in line
    )
    assert found["triton"] == pinned["triton"] and "torch" in found
    print("quick start on plain PyPI:", found["torch"], found["triton"])


def test_the_triton_pin_jobs_install_resolves_on_plain_pypi_for_a_triton_no_torch_asks_for(
    resolved: dict[str, Future[Any]],
) -> None:
    """3.9.0: the first resolution is impossible (said by pip), then torch with its own triton and 3.9.0 over it.
    A pin some torch asks for takes the first resolution alone, as the tox envs above do."""
    proc = resolved["3.9.0"].result()
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert (
        "no torch release asks for triton 3.9.0: torch with the triton it asks for, then 3.9.0 over it" in proc.stdout
    )


def test_the_cpu_extra_alone_gives_the_suites_triton(resolved: dict[str, Future[Any]]) -> None:
    """Unbounded, it gave triton 3.8.0, a version no nightly runs; bounded, the pin the suite is verified with."""
    found = resolved["cpu extra"].result()
    pinned = next(
        ln for ln in (REPO / "ci" / "constraints-cpu.txt").read_text().splitlines() if ln.startswith("triton==")
    )
    assert found["triton"] == pinned.split("==", 1)[1], found["triton"]


def test_the_merge_and_compare_jobs_install_neither_torch_nor_triton(resolved: dict[str, Future[Any]]) -> None:
    found = resolved["merge"].result()
    assert "pyyaml" in found and "scipy" in found
    assert not {"torch", "triton"} & set(found) and not any(n.startswith("nvidia-") for n in found), sorted(found)


def test_the_workflows_install_only_what_these_tests_resolve() -> None:
    """Every install line of the GitHub and GitLab pipelines is one of the forms above; a new one fails here until it
    is checked too."""
    files = [*(REPO / "ci" / "workflows").glob("*.yml"), *(REPO / "ci" / "gitlab").glob("*.yml")]
    checked = (
        re.compile(r"^pip install tox$"),
        re.compile(r'^tox run -e "triton\$\{?\{? ?(matrix\.triton|TRITON) ?\}?\}?"'),
        re.compile(r'^pip install -e "\.\[cpu\]" -c ci/constraints-cpu\.txt$'),
        re.compile(r'^bash ci/install_pin\.sh venv "\$PIN"$'),
        re.compile(r"^pip install -e \.$"),  # merge, compare, accept: below, without torch or triton
        re.compile(r"^pip install -q pyyaml$"),  # the plan job reads ci/nightly-plan.yaml
    )
    seen = 0
    for path in files:
        for key, value in _walk(yaml.safe_load(path.read_text())):
            if key not in ("run", "script") or not isinstance(value, (str, list)):
                continue
            for line in (
                ln.strip() for v in (value if isinstance(value, list) else [value]) for ln in str(v).splitlines()
            ):
                if re.search(r"\bpip install\b|\btox run\b|install_pin", line) and not line.startswith("#"):
                    seen += 1
                    assert any(rx.search(line) for rx in checked), f"{path.name}: an install no test resolves: {line}"
    assert seen >= 6
    pins = {str(p) for p in yaml.safe_load((REPO / "ci" / "nightly-plan.yaml").read_text())["static"]["pins"]}
    assert pins and pins <= set(PINS), pins  # the nightly's pins are tox envs the first test resolves


def _walk(node: object) -> list[tuple[str, object]]:
    """Every key and value of a parsed YAML document, at any depth."""
    found: list[tuple[str, object]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((str(key), value))
            found += _walk(value)
    elif isinstance(node, list):
        for item in node:
            found += _walk(item)
    return found
