"""Fixtures shared by the CPU tests (helpers live in helpers.py)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pypi_resolutions  # noqa: E402 - tests/ on the path first
import static_checks_beside  # noqa: E402
from helpers import Zygote, Zygotes, run_cli  # noqa: E402

from harness.support import zygote  # noqa: E402

# The harness's result cache (harness.execution.result_cache) would let one test's builds answer another's: every
# test runs its jobs unless it turns the cache on itself (tests/test_result_cache.py, the smoke matrix's warm run).
os.environ["HARNESS_RESULT_CACHE"] = "0"

#: pytester: the harness's pytest plugin run in the test's own process (tests/test_run_end_to_end.py)
pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parent.parent
_BACKGROUND_FOLDERS = pytest.StashKey[list[Path]]()
#: work started in the background as soon as a session holds the module that reads it: the module, the variable
#: naming its folder (set by the session's controller, inherited by its workers) and the starter
BACKGROUND = {
    "test_static_checks.py": (static_checks_beside.ENV, static_checks_beside.start),
    "test_pypi_resolution.py": (pypi_resolutions.ENV, pypi_resolutions.start),
}


def _start_zygote(folder: str, role: str) -> tuple[Zygote, subprocess.Popen[bytes]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.pop("TRITON_INTERPRET", None)
    if role == "interpret":  # as the pool starts an interpreter worker (harness.execution.pool)
        env["TRITON_INTERPRET"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.support.zygote", folder, role],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    return Zygote(zygote.address(folder, role), proc.pid), proc


@pytest.fixture(scope="session", autouse=True)
def zygotes() -> Iterator[Zygotes]:
    """Four warm zygotes per test process (harness.support.zygote): the suite's ~250 ``harness`` command lines
    are forked by the ``cli`` one (tests/helpers.py's ``run_cli``), their compile and interpreter workers by the
    ``compile`` and ``interpret`` ones, the children that import a matrix's user modules first by the ``probe`` one,
    instead of each importing pytest, the harness and torch again. They are
    announced as soon as they are started; a run that finds one not ready yet starts a fresh interpreter, as a run
    without one does. The tests of faults, signals, lifelines and isolation turn them off (``no_zygote``) so that
    the path every user runs stays the one they check; tests/test_zygote.py checks the forked path against it."""
    folder = tempfile.mkdtemp(prefix="hz-")
    started = {role: _start_zygote(folder, role) for role in ("compile", "interpret", "cli", "probe")}
    os.environ[zygote.ENV] = folder
    yield Zygotes(**{role: z for role, (z, _) in started.items()})
    os.environ.pop(zygote.ENV, None)
    for _, proc in started.values():
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def smoke_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The default matrix run cold (Triton's cache and the harness's empty) and then warm, once per test process.
    Its Triton cache then also serves the verdict module's builds of the same binaries: ``SAME_WORKER`` keeps both
    modules on one xdist worker, so neither pays for them twice."""
    tmp = tmp_path_factory.mktemp("smoke")
    env = {
        "TRITON_CACHE_DIR": str(tmp / "triton-cache"),
        "HARNESS_CACHE_DIR": str(tmp / "harness-cache"),
        "HARNESS_RESULT_CACHE": "1",  # as a user's runs have it: the warm run takes unchanged jobs from it
        # two compile workers, as a 2-core machine running the matrix alone has (the suite's xdist worker count would
        # give one): while the module beside it waits on a limit or a child, the second takes the idle core
        "HARNESS_COMPILE_WORKERS": "2",
    }
    timings = {}
    outputs = {}
    for label in ("cold", "warm"):
        start = time.perf_counter()
        # one process: the ratio then measures the caches, not xdist start-up competing with the rest of the suite
        wide = ["--wide"] if label == "cold" else []  # the cold run prints the full tables, the warm one the summary
        proc = run_cli("run", "--out", str(tmp / label), "-n", "0", *wide, env=env)
        timings[label] = time.perf_counter() - start
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        outputs[label] = proc.stdout
    return {"dir": tmp, "timings": timings, "stdout": outputs, "env": env}


@pytest.fixture(scope="module", autouse=True)
def environment_kept() -> Iterator[None]:
    """Each module leaves ``os.environ`` as it found it. A library imported in a test's own process may set a
    variable there: torchao sets ``TORCHINDUCTOR_CACHE_DIR`` (tests/test_library_kernels.py). Left set, every later
    ``harness`` command of that xdist worker carried a ``TORCH*`` variable its zygotes were not started with, so
    each was refused and started fresh (harness.support.zygote.READ_AT_IMPORT): 160 CPU-seconds more in one
    measured run (docs/performance.md, "Suite time")."""
    saved = dict(os.environ)
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture()
def no_zygote(monkeypatch: pytest.MonkeyPatch) -> None:
    """Command lines and workers in this test start as fresh interpreters, as a user's do."""
    monkeypatch.delenv(zygote.ENV, raising=False)


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh harness cache, so resource figures are really re-derived from the tools."""
    cache = tmp_path / "harness-cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    return cache


#: the order the modules start in (the rest follow in their collected order). Under ``--dist loadfile`` a module is
#: one unit of work, handed to whichever worker is free. The default matrix's cold run (two minutes of compiles)
#: starts first; beside it, the modules that mostly wait (on a limit they provoke, a child they end, an install),
#: while the background work (``BACKGROUND``: pip resolving against PyPI, the static checks) and the cold run's second
#: compile worker can take the core they leave idle, which a wait later in the session leaves to no one; then the
#: other modules of ten seconds or more, longest first, so that the session ends on short ones instead of one core
#: busy while the other idles. Measured: docs/performance.md, "Suite time".
FIRST = (
    "test_smoke_matrix.py",
    "test_children_end.py",
    "test_zygote.py",
    "test_hostile_inputs.py",
    "test_isolation.py",
    "test_ops_capture.py",
    "test_compiled_capture.py",  # about 60 s, a quarter of it waiting on its hang limit
    "test_gitlab_pipeline.py",  # about 30 s, its jobs' processes waited on
    "test_faults.py",
    "test_wheel.py",
    "test_bad_input_corpus.py",
    "test_library_kernels.py",
    "test_upgrade_evidence.py",
    "test_workflows.py",
    "test_nightly_gate.py",
    "test_data_safety.py",
    "test_repro.py",
    "test_progress.py",
    "test_readme.py",
    "test_ops_autotune_as_triton.py",
    "test_run_end_to_end.py",
    "test_launch_parity.py",
    "test_kernels_interpret.py",
    "test_validate_scaling.py",
    "test_incomplete.py",
    "test_report_browser.py",
)

#: modules that read what ran in the background since the session's start (tests/static_checks_beside.py: ruff and
#: mypy; tests/pypi_resolutions.py: pip waiting on PyPI, 1 to 4 minutes by the network's day): last, in this
#: order, so that they have had longest
LAST = ("test_static_checks.py", "test_pypi_resolution.py")


#: modules that share a session fixture's work, run by one xdist worker under ``--dist loadfile`` (else each worker
#: that runs one of them would build the fixture again): module -> the module whose work unit it joins
SAME_WORKER = {"tests/test_verdicts_compiled.py": "tests/test_smoke_matrix.py"}


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadfile`` with the modules of ``SAME_WORKER`` in one work unit, handed out in the collected order
    (``pytest_collection_modifyitems``'s); any other mode as xdist makes it. xdist 3.6+ otherwise reorders the units
    by their number of tests, which put the two longest modules third and fourth and the PyPI module mid-run."""
    if config.getoption("dist", None) != "loadfile":
        return None
    config.option.loadscopereorder = False
    from xdist.scheduler import LoadFileScheduling

    class JoinedFiles(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SAME_WORKER.get(scope, scope)

    return JoinedFiles(config, log)  # type: ignore[arg-type]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of ``FIRST`` first, the rest in their collected order (the same order in every xdist worker), the
    modules of ``LAST`` last; the work they read started in the background as soon as a session holds them."""
    rank = {name: i for i, name in enumerate(FIRST)}
    last = {name: len(rank) + 1 + i for i, name in enumerate(LAST)}
    items.sort(key=lambda item: rank.get(item.path.name, last.get(item.path.name, len(rank))))
    held = {item.path.name for item in items}
    for module, (variable, start) in BACKGROUND.items():
        shared = os.environ.get(variable)
        if shared and module in held:
            start(Path(shared))


def pytest_configure(config: pytest.Config) -> None:
    """The session's controller (xdist's, or the only process) names the folders that its workers inherit."""
    if hasattr(config, "workerinput"):
        return
    folders = config.stash.setdefault(_BACKGROUND_FOLDERS, [])
    for module, (variable, _) in BACKGROUND.items():
        if not os.environ.get(variable):
            os.environ[variable] = tempfile.mkdtemp(prefix=f"harness-{module.removeprefix('test_')[:-3]}-")
            folders.append(Path(os.environ[variable]))


def pytest_unconfigure(config: pytest.Config) -> None:
    """The controller ends what is left of the background work (an interrupted or deselecting session)."""
    for folder in config.stash.get(_BACKGROUND_FOLDERS, []):
        for variable, _ in BACKGROUND.values():
            if os.environ.get(variable) == str(folder):
                os.environ.pop(variable)
        with contextlib.suppress(OSError, ValueError):
            os.killpg(int((folder / "pid").read_text()), signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
