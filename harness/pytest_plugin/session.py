"""The harness's per-process session: the run directory (claimed, resumed or forced), the worker pool, the GPU this
process runs on, the deselection of cases for another Triton, and (controller only) the writer of the run's files,
the reports at the end and the terminal summary."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.analysis.findings import Findings, analyse
from harness.execution.provenance import run_info
from harness.matrix import shards
from harness.matrix.cases import Case, expand, selection_entry, targets_named, with_targets_option
from harness.matrix.reading import MatrixError, parse
from harness.model.records import Record
from harness.model.run_info import RunInfo, Selection, ShardRef
from harness.model.targets import catalogue
from harness.pytest_plugin import sharding
from harness.pytest_plugin.interrupts import InterruptGuard
from harness.pytest_plugin.items import RECORD_PROPERTY, CaseItem, compile_parallelism
from harness.pytest_plugin.plugins import xdist_loaded
from harness.pytest_plugin.writer import ResultsWriter
from harness.render import report_md
from harness.results import rundir
from harness.results.store import ResultsFileError, load_results
from harness.support import tritoncompat

if TYPE_CHECKING:
    from harness.model.runtime import GpuSlot
    from harness.tuning.winners import StoredWinners

OUT_KEY = pytest.StashKey[Path]()


class HarnessSession:
    """Per-process state: output directory, workers, and (controller only) the results writer."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.done_cases: set[str] = set()  # case ids an interrupted run already finished (--harness-resume)
        if self.is_worker:
            out = Path(config.workerinput["harness_out"])  # type: ignore[attr-defined]
            self.done_cases = set(config.workerinput.get("harness_done", ()))  # type: ignore[attr-defined]
        else:
            opt = config.getoption("harness_out")
            out = Path(opt) if opt else rundir.default_name()
        config.stash[OUT_KEY] = out.resolve()
        self.out = out.resolve()
        self.writer: ResultsWriter | None = None
        self.previous: list[Record] | None = None
        self.deselected_versions: dict[str, int] = {}
        self.deselected_done = 0
        self._workers: Any = None
        self._lock: rundir.RunLock | None = None
        self.guard = InterruptGuard()
        self.write_error: str | None = None  # the first failed write of the run's files (the run then stops)
        self._session: pytest.Session | None = None
        self._parsed: list[Any] | None = None
        self._stored: StoredWinners | None = None
        self.selected: list[Selection] | None = None  # the compile cases this run is to build
        try:  # the CLI checked it already; a plain pytest run gets a usage error in one line
            opt = config.getoption("harness_shard")
            self.shard = shards.parse(opt, os.environ) if opt else None
        except shards.ShardError as exc:
            raise pytest.UsageError(str(exc)) from None
        self._findings: Findings | None = None  # the finished run analysed once, for its files and the summary
        if not self.is_worker and self._matrix_paths() and not config.option.collectonly:
            self._own_run_dir()  # a --collect-only (harness list) writes no run directory

    def stored_winners(self) -> StoredWinners:
        """The winners of the run ``--harness-winners-from`` names (read once; the CLI checked it is readable)."""
        if self._stored is None:
            path = self.config.getoption("harness_winners_from")
            from harness.tuning import winners

            self._stored = winners.stored_winners(load_results(Path(path))[1]) if path else {}
        return self._stored

    def _matrix_paths(self) -> list[Path]:
        """Matrix files named on the command line: only then is this pytest run a harness run."""
        if self.config.option.collectonly:
            return []
        paths = [Path(arg.split("::")[0]) for arg in self.config.args]
        return [p for p in paths if p.suffix in (".yaml", ".yml") and p.is_file()]

    def _own_run_dir(self) -> None:
        """Lock the run directory; on resume, load the finished records and the cases they cover."""
        resume = self.config.getoption("harness_resume")
        try:
            self._lock = rundir.prepare(self.out, resume, self.config.getoption("harness_force"))
            self.guard.install()
            if resume and rundir.has_records(self.out):  # else prepare() started it over: nothing had finished
                matrix = next(iter(self._matrices()), None)
                self._resumed_run, self.done_cases, self.previous = rundir.resume_state(
                    self.out, matrix.content_hash if matrix else None, self._selection(matrix)
                )
        except (rundir.RunDirError, ResultsFileError) as exc:
            if self._lock is not None:
                self._lock.release()
            raise pytest.UsageError(str(exc)) from None

    def _selection(self, matrix: Any) -> tuple[Selection, ...]:
        """What the matrix selects now (before ``-k``), for a resume to say what an edit changed."""
        if matrix is None:
            return ()
        try:
            cases = expand(with_targets_option(matrix, self.config.getoption("harness_targets")),
                           tritoncompat.installed_triton_version())  # fmt: skip
        except Exception:  # noqa: BLE001 - the words of a refusal only: the refusal stands without them
            return ()
        return tuple(selection_entry(c) for c in cases if not c.is_interpret and c.configs)

    def _versions_elsewhere(self) -> dict[str, int]:
        """Cases of the command line's matrices that need another Triton than the installed one."""
        installed = tritoncompat.installed_triton_version()
        counts: dict[str, int] = {}
        for matrix in self._matrices():
            for case in expand(matrix, installed):
                if case.triton != installed:
                    counts[case.triton] = counts.get(case.triton, 0) + 1
        return counts

    def _matrices(self) -> list[Any]:
        """The valid matrices named on the command line, parsed once per process."""
        if self._parsed is None:
            self._parsed = []
            for path in self._matrix_paths():
                try:
                    self._parsed.append(parse(path, targets=targets_named(self.config.getoption("harness_targets"))))
                except MatrixError:
                    continue
        return self._parsed

    def case_index(self) -> dict[str, Case]:
        """Every case of the command line's matrices by id, as the workers collect them."""
        installed = tritoncompat.installed_triton_version()
        targets = self.config.getoption("harness_targets")
        return {c.id: c for m in self._matrices() for c in expand(with_targets_option(m, targets), installed)}

    @property
    def workers(self) -> Any:
        if self._workers is None:
            from harness.execution.placement import this_process_gpu
            from harness.execution.pool import Workers

            self._workers = Workers(this_process_gpu())
        return self._workers

    def gpu_for(self, target: str) -> tuple[GpuSlot | None, str]:
        """The GPU this process runs ``target`` cases on (or None), and the records' note: why not, or --device-as."""
        if self.config.getoption("harness_static_only"):
            return None, ""
        from harness.execution.placement import gpu_for

        mapped = tuple(t.strip() for t in (self.config.getoption("harness_device_as") or "").split(",") if t.strip())
        return gpu_for(catalogue()[target], mapped)

    def matrix_targets(self, item: pytest.Item) -> list[str]:
        parent = item.parent
        return list(getattr(parent, "targets", ()))

    @pytest.hookimpl(tryfirst=True)  # before -k: a shard is a part of the matrix, whatever the selection
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not any(isinstance(item, CaseItem) for item in items):
            return  # no matrix collected: an unrelated pytest session never imports Triton (about 1.3 s)
        installed = tritoncompat.installed_triton_version()
        keep, drop = [], []
        mine = (
            None
            if self.shard is None
            else sharding.case_ids(items, installed, self.shard, config.getoption("harness_shard_costs"))
        )
        for item in items:
            if isinstance(item, CaseItem) and mine is not None and item.case.id not in mine:
                drop.append(item)  # another shard's: said by the run info's shard, not counted as deselected
            elif isinstance(item, CaseItem) and item.case.triton != installed:
                drop.append(item)
                self.deselected_versions[item.case.triton] = self.deselected_versions.get(item.case.triton, 0) + 1
            elif isinstance(item, CaseItem) and item.case.id in self.done_cases:
                drop.append(item)  # finished by the interrupted run being resumed: its records are kept
                self.deselected_done += 1
            else:
                keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Start this process's compile workers while pytest gets going: the first case then finds them warm."""
        if session.config.option.collectonly:
            return
        if not self.is_worker and self.selected is None:
            self.selected = [
                selection_entry(i.case)
                for i in session.items
                if isinstance(i, CaseItem) and not i.case.is_interpret and i.case.configs
            ]
        if any(isinstance(i, CaseItem) and not i.case.is_interpret and i.case.configs for i in session.items):
            self.workers.prestart("compile", compile_parallelism())

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        batch = (
            [
                Record.from_dict(json.loads(str(value)))
                for name, value in report.user_properties
                if name == RECORD_PROPERTY
            ]
            if report.when == "call"
            else []
        )
        # taken out of every phase's report before the JUnit writer sees them (it writes the teardown's): the XML
        # carries ids and outcomes, results.json the records
        report.user_properties = [(n, v) for n, v in report.user_properties if n != RECORD_PROPERTY]
        if batch and self.write_error is None:
            try:
                writer = self._ensure_writer()
                writer.add_many(batch)
            except OSError as exc:  # disk full, a quota, a file size limit: the run stops, said in one line
                self._write_failed(exc)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    def _write_failed(self, exc: OSError) -> None:
        if self.write_error is None:
            self.write_error = (
                f"cannot write this run's files in {self.out}: {exc.strerror or exc}; the run "
                "stopped (--resume finishes it once there is room)"
            )
            if self._session is not None:
                self._session.shouldstop = self.write_error

    def _ensure_writer(self) -> ResultsWriter:
        if self.writer is None:
            if self.previous is not None:  # resuming: the first run's provenance, and when it was resumed
                run = self._resumed_run
                now = datetime.now(timezone.utc).isoformat(timespec="seconds")
                run = run.updated(resumed=(*(run.resumed or ()), now)).without("read_warnings")
                self.writer = ResultsWriter(self.out, run.updated(interrupted=False, end=None), self.previous)
            else:
                self.writer = ResultsWriter(self.out, self._run_info())
        return self.writer

    def _run_info(self) -> RunInfo:
        # The xdist controller collects nothing itself: read the matrix named on the command line.
        matrix = next(iter(self._matrices()), None)
        info = run_info(
            matrix.name if matrix else "",
            str(matrix.path) if matrix else "",
            matrix.content_hash if matrix else "",
            tritoncompat.installed_triton_version(),
        )
        shard = (
            ShardRef(index=self.shard.index, total=self.shard.total, source=self.shard.source) if self.shard else None
        )
        return info.updated(
            shard=shard,
            targets=tuple(matrix.targets) if matrix else (),
            selected=tuple(self.selected or ()),
            compare_thresholds={
                k.name: k.compare_threshold
                for k in (matrix.kernels if matrix else ())
                if k.compare_threshold is not None
            },
        )

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        self.guard.note()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.guard.finishing = True
        if self._workers is not None:
            self._workers.close()
        interrupted = self.guard.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED
        empty_shard = self.shard is not None and self._lock is not None  # a shard may hold no case: still a run
        if self.writer is None and (
            self.previous is not None or ((interrupted or empty_shard) and self._lock is not None)
        ):
            self._ensure_writer()  # a resume with nothing left to run, or a run cut before its first record
        try:
            if self.writer is not None:
                self.writer.run = self.writer.run.updated(interrupted=interrupted or self.write_error is not None)
                self.writer.finish()
                from harness.render.html_page import html_report
                from harness.support.safe_files import write_atomic

                self._findings = analyse([self.writer.run], self.writer.records)
                write_atomic(self.out / "report.md", report_md.markdown_report(self._findings))
                write_atomic(self.out / "report.html", html_report(self._findings))
        except OSError as exc:
            self._write_failed(exc)
        if self._lock is not None:
            self._lock.release()
        if self.write_error is not None and not self.is_worker:
            import sys

            print(f"harness: {self.write_error}", file=sys.stderr, flush=True)
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.guard.uninstall()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker:
            return
        tr = terminalreporter
        from harness.render import terminal

        width = min(terminal.WIDTH, tr._tw.fullwidth - 1) if tr.isatty else terminal.WIDTH  # an 80-column terminal
        said = [f"harness: resumed {self.out}: {self.deselected_done} case(s) already finished there (their records "
                "are kept)"] if self.deselected_done else []  # fmt: skip
        spread = xdist_loaded(self.config) and getattr(self.config.option, "numprocesses", None)
        if not self.deselected_versions and spread:
            self.deselected_versions = self._versions_elsewhere()  # xdist workers deselected them; count here
        for version, count in sorted(self.deselected_versions.items()):  # the command on a line of its own
            said += [f"harness: {count} case(s) deselected: they need triton {version}, installed is "
                     f"{tritoncompat.installed_triton_version()}; run them with", f"  tox -e {tox_env_for(version)} -- <matrix>"]  # fmt: skip
        skipped = [
            str(r.longrepr[2]).removeprefix("Skipped: ")
            for r in tr.stats.get("skipped", [])
            if isinstance(r.longrepr, tuple)
        ]
        for line in terminal.notes(said, skipped, width):
            tr.write_line(line)
        if self.writer is None or not self.writer.records:
            return
        found = self._findings or analyse([self.writer.run], self.writer.records)
        for section, line in terminal.final_lines(found, self.config.getoption("harness_wide"), width):
            if section:
                tr.section(line)
            else:
                tr.write_line(line)
        # the folder on a line of its own (a run folder's path alone is what an 80-column line has room for)
        tr.write_line("harness: results in results.json, report in report.md and report.html, under")
        tr.write_line(f"  {self.out}")


def tox_env_for(version: str) -> str:
    parts = tritoncompat.version_tuple(version)
    return f"triton{parts[0]}{parts[1]}" if len(parts) >= 2 else f"triton-{version}"
