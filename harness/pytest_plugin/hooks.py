"""The plugin's hooks: options, the session registered per process, matrix files collected, xdist's node hooks.

``pytest matrices/smoke.yaml -n auto -k mi300x --junitxml=out.xml`` works as is:
ids such as ``matmul[fp16-M4096xN4096xK4096-mi300x-triton3.6.0]``, ``-k`` to
select, pytest-xdist to spread cases over cores. Each process compiles through
its own long-lived worker (:mod:`harness.execution.pool`); records travel to the
controller in the reports' ``user_properties`` and are written there, so
results, report and table come from one place whether or not xdist is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.matrix.cases import selection_entry
from harness.pytest_plugin.items import MatrixFile
from harness.pytest_plugin.plugins import xdist_loaded
from harness.pytest_plugin.progress_hooks import ProgressHooks
from harness.pytest_plugin.session import OUT_KEY, HarnessSession


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "Triton portability harness")
    group.addoption("--harness-out", default=None, help="run directory (default runs/<UTC timestamp>)")
    group.addoption(
        "--harness-targets", default=None, help="comma-separated catalogue targets, replacing the matrix's targets"
    )
    group.addoption("--harness-static-only", action="store_true", help="never run cases on a local GPU")
    group.addoption("--harness-shard", default=None, help="run only shard I/N of the matrix's cases, or 'auto'")
    group.addoption("--harness-shard-costs", default=None, help="balance the shards on a stored run's case times")
    group.addoption("--harness-retune", action="store_true", help="ignore cached autotune winners")
    group.addoption(
        "--harness-winners-from",
        default="",
        help="a stored run whose tuned winners price the other targets' configs here (portability)",
    )
    group.addoption("--harness-wide", action="store_true", help="print report.md's full tables in the terminal")
    group.addoption(
        "--harness-device-as",
        default=None,
        help="comma-separated targets the local GPU stands for (same architecture, another model)",
    )
    group.addoption(
        "--harness-resume",
        action="store_true",
        help="finish an interrupted run in --harness-out: keep its records, run only missing cases",
    )
    group.addoption(
        "--harness-progress",
        action="store_true",
        help="one status line (cases, builds per target, GPU cases, time left) instead of a dot per case",
    )
    group.addoption(
        "--harness-force",
        action="store_true",
        help="start over in a run directory that already holds records (they are replaced)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(HarnessSession(config), "harness-session")
    if config.getoption("harness_progress") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(ProgressHooks(config), "harness-progress")
    if xdist_loaded(config):
        config.pluginmanager.register(_XdistHooks(), "harness-xdist")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix in (".yaml", ".yml") and parent.session.isinitpath(file_path):
        return MatrixFile.from_parent(parent, path=file_path)
    return None


class _XdistHooks:
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller collects nothing: a worker's item ids (after -k and deselection) are the selection."""
        session = node.config.pluginmanager.get_plugin("harness-session")
        if session is not None and not session.selected:
            index = session.case_index()
            session.selected = [
                selection_entry(index[i])
                for i in (n.rsplit("::", 1)[-1] for n in ids)
                if i in index and not index[i].is_interpret and index[i].configs
            ]

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["harness_out"] = str(node.config.stash[OUT_KEY])
        session = node.config.pluginmanager.get_plugin("harness-session")
        node.workerinput["harness_done"] = sorted(session.done_cases) if session else []
