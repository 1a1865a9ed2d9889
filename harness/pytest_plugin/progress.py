"""One status line while a run goes: cases done of all, builds per target column, GPU cases, what is running,
elapsed and an estimate of what is left. On a terminal the line is redrawn in place (at most a few times a
second); in a log (CI) a line is written at each tenth of the cases, so a log stays short. Never wider than
:data:`WIDTH` columns (nor the terminal). It lives in the pytest controller and only counts what reports say.

Above it, each kernel's verdict line as soon as every build the run selected of that kernel is in (the line the
run's summary ends with, decided by the same analysis over those builds): the first answer comes seconds into a
run, not at its end."""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.model.records import Record
from harness.model.run_info import Selection
from harness.pytest_plugin.items import RECORD_PROPERTY

WIDTH = 100
REDRAW_S = 0.25  # a terminal's line is redrawn at most this often
LOG_STEPS = 10  # a log gets a line at each tenth of the cases


def _column(target: str, environment: str) -> str:
    return target if environment == "default" else f"{target}@{environment}"


def _short(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


@dataclass
class Progress:
    """What the line says, counted from the reports as they arrive (mutable: it is the display's own state)."""

    write: Callable[[str], None]  # the terminal reporter's writer (what pytest itself prints through)
    tty: bool
    width: int = WIDTH
    clock: Callable[[], float] = time.monotonic
    cases_total: int = 0
    cases_done: int = 0
    builds_total: Counter[str] = field(default_factory=Counter)
    builds_done: Counter[str] = field(default_factory=Counter)
    gpu_done: int = 0
    failed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # case time by kind: builds, interpreter
    gpu_cases: list[tuple[float, float, float]] = field(
        default_factory=list
    )  # per tuned case: configs, baselines, sustained
    compiles: Counter[str] = field(default_factory=Counter)  # "cold", "cached" (Triton's cache), "reused" (ours)
    running: list[str] = field(default_factory=list)
    kernel_builds: Counter[str] = field(default_factory=Counter)  # per kernel: the builds the run selected ...
    kernel_records: dict[str, list[Record]] = field(default_factory=dict)  # ... and those in so far
    started: float = 0.0
    _drawn: float = -1.0
    _logged_step: int = 0

    def start(self, cases_total: int, selected: Iterable[Selection]) -> None:
        self.started = self.clock()
        self.cases_total = cases_total
        for s in selected:
            self.builds_total[_column(str(s.target), str(s.environment))] += len(s.configs or ())
            if s.kernel:
                self.kernel_builds[s.kernel] += len(s.configs or ())
        self.width = min(WIDTH, self.width)
        if not self.tty:  # a terminal's line waits for the first case: xdist redraws its own status line till then
            self.draw(force=True)

    def case_started(self, name: str) -> None:
        self.running.append(name)
        self.draw()

    def records(self, records: Iterable[Record]) -> None:
        """A case's records, as its call report brings them."""
        for r in records:
            if r.mode == "compile":
                self.builds_done[r.column] += 1
                self._kernel_build(r)
                if r.compile_cache in ("miss", "hit", "harness"):
                    self.compiles[{"miss": "cold", "hit": "cached", "harness": "reused"}[r.compile_cache]] += 1
            elif r.mode == "tune":
                self.gpu_done += 1
                phases = r.runtime.phases_s if r.runtime else None
                if phases is not None:
                    self.gpu_cases.append(
                        (float(phases.configs or 0), float(phases.baselines or 0), float(phases.sustained or 0))
                    )

    def _kernel_build(self, r: Record) -> None:
        """Count a kernel's build; once all it selected are in, say its verdict line above the status line."""
        if not self.kernel_builds[r.kernel]:
            return
        held = self.kernel_records.setdefault(r.kernel, [])
        held.append(r)
        if len(held) == self.kernel_builds[r.kernel]:
            from harness.analysis.findings import analyse
            from harness.render.terminal import kernel_lines

            for line in kernel_lines(analyse((), held), width=1 << 16):  # wrapped here, not cut
                self.say("harness: " + line.strip())

    def say(self, text: str) -> None:
        """A line of its own above the status line (which a terminal gets redrawn under it), wrapped at its
        `` · `` separators to the width, never cut."""
        lines = [""]
        for part in text.split(" · "):
            joined = f"{lines[-1]} · {part}" if lines[-1] else part
            if len(joined) <= self.width or not lines[-1]:
                lines[-1] = joined
            else:
                lines.append("    " + part)
        self.write(("\r\x1b[K" if self.tty else "") + "\n".join(lines) + "\n")
        if self.tty:
            self.draw(force=True)

    def timed(self, kind: str, seconds: float) -> None:
        """A case's call took ``seconds`` (``kind``: builds or interpreter): where the run's time went."""
        self.seconds[kind] = self.seconds.get(kind, 0.0) + seconds

    def case_done(self, name: str, failed: bool) -> None:
        if name in self.running:
            self.running.remove(name)
        self.cases_done += 1
        self.failed += 1 if failed else 0
        self.draw()

    def line(self) -> str:
        elapsed = self.clock() - self.started
        parts = [f"harness: {self.cases_done}/{self.cases_total} cases"]
        builds = " ".join(f"{c} {self.builds_done[c]}/{n}" for c, n in sorted(self.builds_total.items()))
        if builds:
            parts.append(f"builds {builds}")
        if self.gpu_done:
            parts.append(f"gpu {self.gpu_done} done")
        if self.failed:
            parts.append(f"{self.failed} failed")
        left = ""
        if 0 < self.cases_done < self.cases_total:
            left = f", ~{_short(elapsed / self.cases_done * (self.cases_total - self.cases_done))} left"
        parts.append(f"{_short(elapsed)}{left}")
        text = " · ".join(parts)
        if self.running and self.tty:
            text += f" · now {self.running[-1]}"
        return text if len(text) <= self.width else text[: self.width - 1] + "…"

    def draw(self, force: bool = False) -> None:
        now = self.clock()
        if self.tty:
            if force or now - self._drawn >= REDRAW_S or self.cases_done == self.cases_total:
                self.write("\r\x1b[K" + self.line())
                self._drawn = now
            return
        step = LOG_STEPS * self.cases_done // self.cases_total if self.cases_total else LOG_STEPS
        if force or step > self._logged_step:
            self._logged_step = step
            self.write(self.line() + "\n")

    def breakdown(self) -> list[str]:
        """Where the run's time went: wall time, case time by kind (summed over the workers) and how many builds were
        compiled or came from Triton's cache; on a GPU run a second line with the GPU phases (time holding the GPU:
        the configs' checks and timings, the baselines', the interleaved rounds of both), their per-case medians
        and how many cases spent less on their baselines than on their configs."""
        wall = self.clock() - self.started
        kinds = ", ".join(f"{k} {_short(v)}" for k, v in sorted(self.seconds.items()))
        parts = [f"harness: {self.cases_done} cases in {_short(wall)}", f"case time {kinds or 'none'}"]
        if self.compiles:
            counts = ", ".join(f"{self.compiles[k]} {k}" for k in ("cold", "cached", "reused") if self.compiles[k])
            parts.append(f"compiles {counts}")
        lines = [" · ".join(parts)]
        if self.gpu_done:
            n = len(self.gpu_cases)
            cols = list(zip(*self.gpu_cases)) if n else [(), (), ()]
            total = sum(sum(c) for c in self.gpu_cases)
            median = [f"{statistics.median(c):.1f}s" if c else "-" for c in cols]
            cheaper = sum(1 for c, b, _ in self.gpu_cases if b <= c)
            lines.append(
                f"harness GPU: {self.gpu_done} cases held it {_short(total)} (configs {_short(sum(cols[0]))}, "
                f"baselines {_short(sum(cols[1]))}, sustained {_short(sum(cols[2]))})"
            )
            lines.append(
                f"  per case: median configs {median[0]}, baselines {median[1]}, sustained {median[2]};"
                f" baselines <= configs in {cheaper}/{n}"
            )
        return [line if len(line) <= self.width else line[: self.width - 1] + "…" for line in lines]

    def finish(self) -> None:
        """End the terminal's line, so what pytest prints next starts on its own line."""
        if self.tty:
            self.write("\r\x1b[K" + self.line() + "\n")


class ProgressHooks:
    """The pytest side of the line (``--harness-progress``, which ``harness run`` passes): totals once the cases are
    collected (by this process, or by the first xdist worker), a case's start and end from its reports, and no
    pytest dot per passing case (the line says it)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.progress: Progress | None = None
        self._failed: set[str] = set()

    def _start(self, cases_total: int) -> None:
        if self.progress is not None:
            return
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is None:
            return
        session = self.config.pluginmanager.get_plugin("harness-session")
        self.progress = Progress(
            write=lambda text: tr.write(text, flush=True),
            tty=bool(tr.isatty),
            width=min(WIDTH, tr._tw.fullwidth - 1) if tr.isatty else WIDTH,
        )
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
        if self.progress is not None:
            self.progress.finish()

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """After the run's summary: where its time went."""
        if self.progress is not None and self.progress.cases_total:
            for line in self.progress.breakdown():
                terminalreporter.write_line(line)
