"""The pytest side of the status line (``--harness-progress``, which ``harness run`` passes): the line exists from
the session's start (its clock runs while the cases are collected and xdist's workers start), its totals arrive
once the cases are collected (by this process, or by the first xdist worker), a case's start and end come from its
reports, and no pytest dot marks a passing case (the line says it). xdist's own status line ("bringing up
nodes...", written twice into a log) is replaced by this one in a harness run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.model.records import Record
from harness.pytest_plugin.items import RECORD_PROPERTY
from harness.pytest_plugin.progress import WIDTH, Progress
from harness.support.ticker import Ticker


class _QuietDistReporter:
    """What xdist's controller calls on its terminal reporter, answered by nothing: the harness's line says it."""

    def setstatus(self, *args: Any, **kwargs: Any) -> None:
        return None

    def ensure_show_status(self) -> None:
        return None

    def write_line(self, msg: str) -> None:
        return None


class ProgressHooks:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.progress: Progress | None = None
        self._ticker: Ticker | None = None
        self._failed: set[str] = set()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is None:
            return
        dsession = self.config.pluginmanager.get_plugin("dsession")
        if dsession is not None and hasattr(dsession, "trdist"):  # before it brings up its nodes
            reporter = self.config.pluginmanager.get_plugin("terminaldistreporter")
            if reporter is not None:
                self.config.pluginmanager.unregister(reporter)
            dsession.trdist = _QuietDistReporter()
        self.progress = Progress(
            write=lambda text: tr.write(text, flush=True),
            tty=bool(tr.isatty),
            width=min(WIDTH, tr._tw.fullwidth - 1) if tr.isatty else WIDTH,
        )
        self._ticker = Ticker(self.progress.tick).start()

    def _start(self, cases_total: int) -> None:
        if self.progress is not None and self.progress.started < 0:
            session = self.config.pluginmanager.get_plugin("harness-session")
            self.progress.start(cases_total, getattr(session, "selected", None) or [])

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.config.pluginmanager.hasplugin("dsession"):  # no xdist: this process ran the collection
            self._start(len(session.items))

    @pytest.hookimpl(trylast=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._start(len(ids))

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        if self.progress is not None:
            self.progress.case_started(nodeid.rsplit("::", 1)[-1])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        # around the session's own hook, which takes the records out of the report before the JUnit writer
        if self.progress is not None:
            if report.when == "call":
                self.progress.records(
                    Record.from_dict(json.loads(str(v))) for n, v in report.user_properties if n == RECORD_PROPERTY
                )
            if report.failed:
                self._failed.add(report.nodeid)
            if report.when == "call":
                self.progress.timed("interpreter" if "-interpret-" in report.nodeid else "builds", report.duration)
            if report.when == "teardown":
                self.progress.case_done(report.nodeid.rsplit("::", 1)[-1], failed=report.nodeid in self._failed)
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        if self.progress is not None and report.passed and report.when == "call":
            return "passed", "", ""
        if self.progress is not None and report.skipped:  # listed by -rs at the end; a letter would break the line
            return "skipped", "", ""
        return None

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._ticker is not None:
            self._ticker.stop()
        if self.progress is not None and self.progress.started >= 0:
            self.progress.finish()

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """After the run's summary: where its time went."""
        if self.progress is not None and self.progress.cases_total:
            for line in self.progress.breakdown():
                terminalreporter.write_line(line)
