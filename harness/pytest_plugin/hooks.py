"""pytest plugin: a matrix file on the command line becomes one item per case.

``pytest matrices/smoke.yaml -n auto -k mi300x --junitxml=out.xml`` works as is:
ids such as ``matmul[fp16-M4096xN4096xK4096-mi300x-triton3.6.0]``, ``-k`` to
select, pytest-xdist to spread cases over cores. Each process compiles through
its own long-lived worker (:mod:`harness.execution.pool`); records travel to the
controller in the reports' ``user_properties`` and are written there, so
results, report and table come from one place whether or not xdist is used.
"""
from __future__ import annotations

import importlib.util
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from harness.matrix import loader
from harness.results import rundir
from harness.support import tritoncompat
from harness.matrix.cases import Case, compile_job, expand, interpret_job, selection_entry, with_targets_option
from harness.device.interpret import UNSUPPORTED
from harness.pytest_plugin.interrupts import InterruptGuard
from harness.matrix.known import apply_known_failures
from harness.matrix.reading import MatrixError, parse
from harness.model.ids import config_id
from harness.model.records import Record, mark_duplicates
from harness.results.store import ResultsFileError, load_results
from harness.pytest_plugin.provenance import run_info
from harness.pytest_plugin.writer import ResultsWriter
from harness.render import tables
from harness.model.targets import catalogue

RECORD_PROPERTY = "harness_record"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "Triton portability harness")
    group.addoption("--harness-out", default=None, help="run directory (default runs/<UTC timestamp>)")
    group.addoption("--harness-targets", default=None,
                    help="comma-separated catalogue targets, replacing the matrix's targets")
    group.addoption("--harness-static-only", action="store_true", help="never run cases on a local GPU")
    group.addoption("--harness-retune", action="store_true", help="ignore cached autotune winners")
    group.addoption("--harness-winners-from", default="",
                    help="a stored run whose tuned winners price the other targets' configs here (portability)")
    group.addoption("--harness-wide", action="store_true", help="print report.md's full tables in the terminal")
    group.addoption("--harness-device-as", default=None,
                    help="comma-separated targets the local GPU stands for (same architecture, another model)")
    group.addoption("--harness-resume", action="store_true",
                    help="finish an interrupted run in --harness-out: keep its records, run only missing cases")
    group.addoption("--harness-force", action="store_true",
                    help="start over in a run directory that already holds records (they are replaced)")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(HarnessSession(config), "harness-session")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "harness-xdist")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix in (".yaml", ".yml") and parent.session.isinitpath(file_path):
        return MatrixFile.from_parent(parent, path=file_path)
    return None


def tox_env_for(version: str) -> str:
    parts = tritoncompat.version_tuple(version)
    return f"triton{parts[0]}{parts[1]}" if len(parts) >= 2 else f"triton-{version}"


class _XdistHooks:
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller collects nothing: a worker's item ids (after -k and deselection) are the selection."""
        session = node.config.pluginmanager.get_plugin("harness-session")
        if session is not None and not session.selected:
            index = session.case_index()
            session.selected = [selection_entry(index[i]) for i in (n.rsplit("::", 1)[-1] for n in ids)
                                if i in index and not index[i].is_interpret and index[i].configs]

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["harness_out"] = str(node.config.stash[OUT_KEY])
        session = node.config.pluginmanager.get_plugin("harness-session")
        node.workerinput["harness_done"] = sorted(session.done_cases) if session else []


OUT_KEY = pytest.StashKey[Path]()


class HarnessSession:
    """Per-process state: output directory, workers, and (controller only) the results writer."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.done_cases: set[str] = set()     # case ids an interrupted run already finished (--harness-resume)
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
        self.write_error: str | None = None   # the first failed write of the run's files (the run then stops)
        self._session: pytest.Session | None = None
        self._parsed: list[Any] | None = None
        self._stored: dict[tuple[str, str, str, str], dict[str, Any]] | None = None
        self.selected: list[dict[str, Any]] | None = None   # the compile cases this run is to build
        if not self.is_worker and self._matrix_paths():
            self._own_run_dir()

    def stored_winners(self) -> dict[tuple[str, str, str, str], dict[str, Any]]:
        """The winners of the run ``--harness-winners-from`` names (read once; the CLI checked it is readable)."""
        if self._stored is None:
            path = self.config.getoption("harness_winners_from")
            from harness.pytest_plugin import gpu_phase

            self._stored = gpu_phase.stored_winners(load_results(Path(path))[1]) if path else {}
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
            if resume:
                matrix = next(iter(self._matrices()), None)
                self._resumed_run, self.done_cases, self.previous = rundir.resume_state(
                    self.out, matrix.content_hash if matrix else None)
        except (rundir.RunDirError, ResultsFileError) as exc:
            if self._lock is not None:
                self._lock.release()
            raise pytest.UsageError(str(exc)) from None

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
                    self._parsed.append(parse(path))
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
            from harness.device.detection import local_gpus, pick_device
            from harness.execution.pool import Workers

            gpu = pick_device(os.environ.get("PYTEST_XDIST_WORKER"), local_gpus())
            self._workers = Workers(gpu)
        return self._workers

    def gpu_for(self, target: str) -> tuple[dict[str, str] | None, str]:
        """The GPU this process runs ``target`` cases on (None when none), and a note for the records:
        why a local GPU of the same architecture does not run them, or that ``--device-as`` mapped it."""
        if self.config.getoption("harness_static_only"):
            return None, ""
        from harness.device.detection import local_gpus, match, pick_device

        gpu = pick_device(os.environ.get("PYTEST_XDIST_WORKER"), local_gpus())
        mapped = tuple(t.strip() for t in (self.config.getoption("harness_device_as") or "").split(",") if t.strip())
        runs, note = match(catalogue()[target], gpu, mapped)
        return (gpu if runs else None), note

    def matrix_targets(self, item: pytest.Item) -> list[str]:
        parent = item.parent
        return list(getattr(parent, "targets", ()))

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        installed = tritoncompat.installed_triton_version()
        keep, drop = [], []
        for item in items:
            if isinstance(item, CaseItem) and item.case.triton != installed:
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
            self.selected = [selection_entry(i.case) for i in session.items
                             if isinstance(i, CaseItem) and not i.case.is_interpret and i.case.configs]
        if any(isinstance(i, CaseItem) and not i.case.is_interpret and i.case.configs for i in session.items):
            self.workers.prestart("compile", compile_parallelism())

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        batch = [Record.from_dict(json.loads(value)) for name, value in report.user_properties
                 if name == RECORD_PROPERTY] if report.when == "call" else []
        # taken out of every phase's report before the JUnit writer sees them (it writes the teardown's): the XML
        # carries ids and outcomes, results.json the records
        report.user_properties = [(n, v) for n, v in report.user_properties if n != RECORD_PROPERTY]
        if batch and self.write_error is None:
            try:
                self._ensure_writer()
                self.writer.add_many(batch)
            except OSError as exc:  # disk full, a quota, a file size limit: the run stops, said in one line
                self._write_failed(exc)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    def _write_failed(self, exc: OSError) -> None:
        if self.write_error is None:
            self.write_error = f"cannot write this run's files in {self.out}: {exc.strerror or exc}; the run " \
                               "stopped (--resume finishes it once there is room)"
            if self._session is not None:
                self._session.shouldstop = self.write_error

    def _ensure_writer(self) -> None:
        if self.writer is None:
            if self.previous is not None:  # resuming: the first run's provenance, and when it was resumed
                run = dict(self._resumed_run)
                run["resumed"] = list(run.get("resumed") or []) + [
                    datetime.now(timezone.utc).isoformat(timespec="seconds")]
                run.pop("read_warnings", None)
                run["interrupted"] = False
                run["end"] = None
                self.writer = ResultsWriter(self.out, run, self.previous)
            else:
                self.writer = ResultsWriter(self.out, self._run_info())

    def _run_info(self) -> dict[str, Any]:
        # The xdist controller collects nothing itself: read the matrix named on the command line.
        matrix = next(iter(self._matrices()), None)
        info = run_info(matrix.name if matrix else "", str(matrix.path) if matrix else "",
                        matrix.content_hash if matrix else "", tritoncompat.installed_triton_version())
        info["targets"] = list(matrix.targets) if matrix else []
        info["selected"] = self.selected or []
        info["compare_thresholds"] = {k.name: k.compare_threshold for k in (matrix.kernels if matrix else ())
                                      if k.compare_threshold is not None}
        return info

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        self.guard.note()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.guard.finishing = True
        if self._workers is not None:
            self._workers.close()
        interrupted = self.guard.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED
        if self.writer is None and (self.previous is not None or (interrupted and self._lock is not None)):
            self._ensure_writer()  # a resume with nothing left to run, or a run cut before its first record
        try:
            if self.writer is not None:
                self.writer.run["interrupted"] = interrupted or self.write_error is not None
                self.writer.finish()
                from harness.render.html_page import html_report
                from harness.support.safe_files import write_atomic

                write_atomic(self.out / "report.md", tables.markdown_report(self.writer.run, self.writer.records))
                write_atomic(self.out / "report.html", html_report([self.writer.run], self.writer.records))
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
        if self.deselected_done:
            tr.write_line(f"harness: resumed {self.out}: {self.deselected_done} case(s) already finished there "
                          "(their records are kept)")
        if not self.deselected_versions and self.config.pluginmanager.hasplugin("xdist") \
                and getattr(self.config.option, "numprocesses", None):
            self.deselected_versions = self._versions_elsewhere()  # xdist workers deselected them; count here
        for version, count in sorted(self.deselected_versions.items()):
            tr.write_line(f"harness: {count} case(s) deselected: they need triton {version}, installed is "
                          f"{tritoncompat.installed_triton_version()}; run them with "
                          f"`tox -e {tox_env_for(version)} -- <matrix>`")
        if self.writer is None or not self.writer.records:
            return
        from harness.render import terminal

        for section, line in terminal.final_lines(self.writer.records, self.config.getoption("harness_wide"),
                                                  [self.writer.run]):
            if section:
                tr.section(line)
            else:
                tr.write_line(line)
        tr.write_line(f"harness: results in {self.out / 'results.json'}, report in {self.out / 'report.md'} "
                      "and report.html")


def _session(config: pytest.Config) -> HarnessSession:
    return config.pluginmanager.get_plugin("harness-session")  # type: ignore[return-value]


class MatrixFile(pytest.File):
    def collect(self) -> Any:
        try:
            matrix = parse(self.path)
        except MatrixError as exc:
            raise self.CollectError(str(exc)) from None
        matrix = with_targets_option(matrix, self.config.getoption("harness_targets"))
        unknown = [t for t in matrix.targets if t not in catalogue()]
        if unknown:
            raise self.CollectError(f"--harness-targets: unknown target(s) {', '.join(unknown)}")
        self.targets = matrix.targets
        for case in expand(matrix, tritoncompat.installed_triton_version()):
            yield CaseItem.from_parent(self, name=case.id, case=case)


class CaseFailed(Exception):
    pass


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        case = self.case
        if not case.configs:
            pytest.skip("no config of the space applies to this shape")
        if case.is_interpret:
            reason = _interpreter_unavailable(case.triton)
            if reason:
                pytest.skip(reason)
        session = _session(self.config)
        spec = loader.load(case.ref)
        if case.is_interpret and not spec.interpretable(case.dtype):
            pytest.skip(f"{case.kernel} does not list {case.dtype} among its interpret_dtypes (Triton's CPU "
                        "interpreter keeps bf16 as raw uint16 and has no fp8 matrix multiply); checked only on a GPU")
        kernel_hash = loader.source_hash(case.ref)
        # the GPU phase runs under Triton's defaults only: its JIT reads the GPU worker's environment
        gpu, device_note = (None, "") if case.is_interpret or not case.environment.is_default or spec.compile_only \
            else session.gpu_for(case.target)
        if gpu is not None:  # the GPU worker starts while the configs compile; its next request waits for this
            session.workers.get("gpu", import_env=case.import_env).request_in_background("gpu_warmup", {},
                                                                                         case.timeout_s)
        started = time.perf_counter()
        records = self._run_configs(session, spec, kernel_hash, prebuild_launchers=gpu is not None)
        compile_s = time.perf_counter() - started
        mark_duplicates(records)
        apply_known_failures(case.known_failures, records)
        # under an opt-in environment a compile error is a finding (it puts the default build at risk, and
        # report.md lists it), not a failure of the run: the verdict is decided under Triton's defaults;
        # a failure the matrix declares known is recorded as expected
        # an interpreter limitation (interpret-unsupported) is recorded with its reason, never the kernel's failure
        bad = [f"{r.config_id}: {r.status}: {r.error[:500]}" for r in records
               if r.status not in ("ok", UNSUPPORTED) and case.environment.is_default and not r.expected_failure]
        if gpu is None and device_note:  # a GPU of this arch is here, but it is another model
            for r in records:
                r.runtime = {"status": "not_launched", "reason": device_note}
        if gpu is not None:
            from harness.pytest_plugin import gpu_phase

            others = [t for t in session.matrix_targets(self) if t != case.target]
            try:
                tune = gpu_phase.run_case(case, records, session.workers.get("gpu", import_env=case.import_env), gpu,
                                         others, retune=self.config.getoption("harness_retune"),
                                         stored=session.stored_winners())
            except Exception as exc:  # noqa: BLE001 - the GPU phase's failure is the case's, never its builds'
                tune = gpu_phase.failed_tune(case, records, f"the GPU phase failed: {type(exc).__name__}: {exc}")
            if device_note:
                tune.runtime["device_as"] = device_note
            tune.runtime.setdefault("phases_s", {})["compile"] = round(compile_s, 3)
            bad += [f"{r.config_id}: on {gpu['name']}: {r.runtime['status']}: {r.runtime.get('error', '')[:500]}"
                    for r in records if r.runtime and r.runtime.get("status") not in ("ok", "not_launched")]
            if tune.status != "ok":
                bad.append(f"on {gpu['name']}: {tune.error}")
            records.append(tune)
        for record in records:
            record.case_id, record.case_records = case.id, len(records)
            self.user_properties.append((RECORD_PROPERTY, json.dumps(record.to_dict())))
        if bad:
            raise CaseFailed(f"{len(bad)} of {len(case.configs)} config(s) failed:\n" + "\n".join(bad))

    def _run_configs(self, session: HarnessSession, spec: Any, kernel_hash: str,
                     prebuild_launchers: bool = False) -> list[Record]:
        """Every config of the case: compiles in parallel over this process's share of the cores."""
        case = self.case
        if case.is_interpret:
            kind, op, jobs, parallel = "interpret", "interpret", [interpret_job(case, e) for e in case.configs], 1
            arch = vendor = "cpu"
        else:
            kind, op, parallel = "compile", "compile", compile_parallelism()
            jobs = [{**compile_job(case, e, str(session.out)), "prebuild_launcher": prebuild_launchers}
                    for e in case.configs]
            target = catalogue()[case.target]
            arch, vendor = target.arch, target.vendor
        results = session.workers.map(kind, op, jobs, case.timeout_s, parallel, case.environment, case.import_env)
        records = []
        for entry, result in zip(case.configs, results):
            cfg = entry.as_dict()
            meta, _ = spec.split_config(cfg)
            base = {"kernel": case.kernel, "dtype": case.dtype, "shape": {} if case.is_interpret else case.shape,
                    "target": case.target, "arch": arch, "vendor": vendor, "triton": case.triton, "config": cfg,
                    "config_id": config_id(cfg), "meta": meta, "origin": entry.origin,
                    "mode": "interpret" if case.is_interpret else "compile", "kernel_hash": kernel_hash,
                    "environment": case.environment.name, "env": case.environment.as_dict(), "case_id": case.id,
                    "deciding_environment": case.deciding, "import_env": dict(case.import_env)}
            fields = {k: v for k, v in result.items() if k not in ("triton", "run_s")}
            records.append(Record.from_dict({**base, **fields}))
        return records

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            from harness.render.escaping import CONTROL

            return CONTROL.sub("", str(excinfo.value))  # a compiler's or kernel's text must not drive the terminal
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name


def compile_parallelism() -> int:
    """Compile workers per pytest process: this process's share of the cores (``HARNESS_COMPILE_WORKERS``)."""
    forced = os.environ.get("HARNESS_COMPILE_WORKERS")
    if forced and forced.isdigit():
        return max(1, int(forced))
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, (os.cpu_count() or 1) // processes)


def _interpreter_unavailable(triton_version: str) -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed: the CPU interpreter check needs it (pip install '.[cpu]')"
    try:
        from importlib.metadata import version

        numpy_version = tritoncompat.version_tuple(version("numpy"))
    except Exception:  # noqa: BLE001
        return "numpy is not installed: the Triton interpreter needs it"
    if tritoncompat.version_tuple(triton_version) <= (3, 6, 99) and numpy_version >= (2, 4):
        return f"numpy {'.'.join(map(str, numpy_version))} breaks triton {triton_version}'s interpreter; " \
               "install numpy<2.4"
    return None
