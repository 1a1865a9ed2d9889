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

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO
from pypi_resolutions import ENV, PINS, UNREACHABLE, resolve_all, results

pytestmark = pytest.mark.network  # pip against plain PyPI (skips, saying so, without it)


class _Found:
    """One install's outcome, as the background process wrote it: its value, or the failure it met."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry

    def result(self) -> Any:
        if "error" in self.entry:
            raise AssertionError(self.entry["error"])
        value = self.entry["value"]
        if isinstance(value, dict) and set(value) == {"returncode", "stdout", "stderr"}:
            return subprocess.CompletedProcess([], value["returncode"], value["stdout"], value["stderr"])
        return tuple(value) if isinstance(value, list) else value


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, _Found]:
    """Every resolution: read from the folder the session started them in (they ran while other modules compiled),
    else run here and now (this module alone, outside the suite's conftest)."""
    folder = Path(os.environ[ENV]) if os.environ.get(ENV) else None
    if folder is None or not (folder / "started").exists():
        folder = tmp_path_factory.mktemp("pypi")
        resolve_all(folder)
    found = results(folder)
    if UNREACHABLE in found:
        pytest.skip(f"{found[UNREACHABLE]}: the resolution against plain PyPI is not checked")
    if "tox" in found:
        pytest.fail(f"tox could not read tox.ini's pin envs: {found['tox']['error']}")
    return {name: _Found(entry) for name, entry in found.items()}


def test_every_tox_pin_env_resolves_on_plain_pypi_with_its_triton(resolved: dict[str, _Found]) -> None:
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


def test_the_quick_start_and_ci_install_resolve_on_plain_pypi(resolved: dict[str, _Found]) -> None:
    """README's test command and .ci/run (ci/prepare_tests.sh): ``-e '.[cpu,test]' -c ci/constraints-cpu.txt``."""
    prepare = "bash ci/prepare_tests.sh && "
    assert prepare in (REPO / "README.md").read_text() and prepare in (REPO / ".ci" / "run").read_text()
    command = "pip install -q --no-compile -e '.[cpu,test]' -c ci/constraints-cpu.txt"
    assert command in (REPO / "ci" / "prepare_tests.sh").read_text()
    found = resolved["quick start"].result()
    pinned = dict(
        line.split("==", 1) for line in (REPO / "ci" / "constraints-cpu.txt").read_text().splitlines() if "==" in line
    )
    assert found["triton"] == pinned["triton"] and "torch" in found
    print("quick start on plain PyPI:", found["torch"], found["triton"])


def test_the_triton_pin_jobs_install_resolves_on_plain_pypi_for_a_triton_no_torch_asks_for(
    resolved: dict[str, _Found],
) -> None:
    """3.9.0: the first resolution is impossible (said by pip), then torch with its own triton and 3.9.0 over it.
    A pin some torch asks for takes the first resolution alone, as the tox envs above do."""
    proc = resolved["3.9.0"].result()
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert (
        "no torch release asks for triton 3.9.0: torch with the triton it asks for, then 3.9.0 over it" in proc.stdout
    )


def test_the_cpu_extra_alone_gives_the_suites_triton(resolved: dict[str, _Found]) -> None:
    """Unbounded, it gave triton 3.8.0, a version no nightly runs; bounded, the pin the suite is verified with."""
    found = resolved["cpu extra"].result()
    pinned = next(
        ln for ln in (REPO / "ci" / "constraints-cpu.txt").read_text().splitlines() if ln.startswith("triton==")
    )
    assert found["triton"] == pinned.split("==", 1)[1], found["triton"]


def test_the_merge_and_compare_jobs_install_neither_torch_nor_triton(resolved: dict[str, _Found]) -> None:
    found = resolved["merge"].result()
    assert "pyyaml" in found and "scipy" in found
    assert not {"torch", "triton"} & set(found) and not any(n.startswith("nvidia-") for n in found), sorted(found)


def test_the_workflows_install_only_what_these_tests_resolve() -> None:
    """Every install line of the GitHub and GitLab pipelines is one of the forms above; a new one fails here until it
    is checked too."""
    files = [*(REPO / "ci" / "workflows").glob("*.yml"), *(REPO / "ci" / "gitlab").glob("*.yml")]
    checked = (
        re.compile(r"^pip install tox$"),
        # GitLab's static job calls its harness through a function, tox's env or a prepared one (HARNESS_VENV)
        re.compile(r'^(harness_run\(\) \{ )?tox run -e "triton\$\{?\{? ?(matrix\.triton|TRITON) ?\}?\}?"'),
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
