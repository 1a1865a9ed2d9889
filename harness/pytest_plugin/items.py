"""Items: a matrix file collects one item per case; running an item builds (or interprets) every config of its case,
runs the GPU phase where a GPU of the target is here, and hands its records to the controller in the report's
``user_properties`` (written there, so results come from one place whether or not xdist is used)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from harness.execution import result_cache
from harness.intake import facts
from harness.intake.inductor import inductor_ref
from harness.matrix.cases import Case, compile_job, expand, interpret_job, targets_named, with_targets_option
from harness.matrix.known import apply_known_failures
from harness.matrix.reading import MatrixError, parse
from harness.model.ids import config_id
from harness.model.jobs import Job, WarmupJob
from harness.model.kernel_refs import CaptureFailedRef, decode
from harness.model.records import Record, mark_duplicates
from harness.model.replies import CompileReply, InterpretReply, Reply
from harness.model.runtime import Phases, Runtime, not_launched
from harness.model.targets import catalogue
from harness.model.vocabulary import INTERPRET_UNSUPPORTED, NOT_CAPTURED
from harness.support import tritoncompat

RECORD_PROPERTY = "harness_record"


def _session(config: pytest.Config) -> Any:
    """This process's :class:`~harness.pytest_plugin.session.HarnessSession` (registered by the plugin)."""
    return config.pluginmanager.get_plugin("harness-session")


class MatrixFile(pytest.File):
    def collect(self) -> Any:
        try:
            matrix = parse(self.path, targets=targets_named(self.config.getoption("harness_targets")))
        except MatrixError as exc:
            raise self.CollectError(str(exc)) from None
        matrix = with_targets_option(matrix, self.config.getoption("harness_targets"))
        unknown = [t for t in matrix.targets if t not in catalogue()]
        if unknown:
            raise self.CollectError(f"--harness-targets: unknown target(s) {', '.join(unknown)}")
        self.targets = matrix.targets
        for case in expand(matrix, tritoncompat.installed_triton_version()):
            yield CaseItem.from_parent(self, name=case.id, case=case)


def _facts_of(item: "CaseItem") -> Any:
    """The case's spec facts. The first item that needs a child for them fetches those of every collected case with
    the same variables in that one child: a captured op's cases for a target wear its face, one library import for
    all of them instead of one per case."""
    case = item.case
    if not facts.known(case.ref, case.import_env):
        alike = [
            i.case.ref for i in item.session.items if isinstance(i, CaseItem) and i.case.import_env == case.import_env
        ]
        facts.fetch([case.ref, *alike], case.import_env)
    return facts.get(case.ref, case.import_env)


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
        uncaptured = decode(case.ref)
        if isinstance(uncaptured, CaptureFailedRef):
            self._capture_failed(uncaptured)
        if case.is_interpret:
            reason = _interpreter_unavailable(case.triton)
            if reason:
                pytest.skip(reason)
        session = _session(self.config)
        spec = _facts_of(self)  # from a child: this process never imports user code
        if case.is_interpret and not spec.interpretable(case.dtype):
            pytest.skip(
                f"{case.kernel} does not list {case.dtype} among its interpret_dtypes (Triton's CPU "
                "interpreter keeps bf16 as raw uint16 and has no fp8 matrix multiply); checked only on a GPU"
            )
        kernel_hash = spec.source_hash
        # the GPU phase runs under Triton's defaults only: its JIT reads the GPU worker's environment
        gpu, device_note = (
            (None, "")
            if case.is_interpret or not case.environment.is_default or spec.compile_only
            else session.gpu_for(case.target)
        )
        if gpu is not None:  # the GPU worker starts while the configs compile; its next request waits for this
            session.workers.get("gpu", import_env=case.import_env).send_in_background(WarmupJob(), case.timeout_s)
        started = time.perf_counter()
        records = self._run_configs(session, spec, kernel_hash, prebuild_launchers=gpu is not None)
        compile_s = time.perf_counter() - started
        records = apply_known_failures(case.known_failures, mark_duplicates(records))
        # under an opt-in environment a compile error is a finding (it puts the default build at risk, and
        # report.md lists it), not a failure of the run: the verdict is decided under Triton's defaults;
        # a failure the matrix declares known is recorded as expected
        # an interpreter limitation (interpret-unsupported) is recorded with its reason, never the kernel's failure
        bad = [
            f"{r.config_id}: {r.status}: {r.error[:500]}"
            for r in records
            if r.status not in ("ok", INTERPRET_UNSUPPORTED) and case.environment.is_default and not r.expected_failure
        ]
        # a kernel Inductor generated: its config checked in its graph under the interpreter at capture
        bad += [
            f"{r.config_id}: interpreter: {c.status}: {(c.error or '')[:500]}"
            for r in records
            if r.correctness is not None and r.mode == "compile"
            for c in r.correctness.failed
        ]
        if gpu is None and device_note:  # a GPU of this arch is here, but it is another model
            records = [dataclasses.replace(r, runtime=not_launched(device_note)) for r in records]
        if gpu is not None:
            from harness.tuning import gpu_phase, tune_record

            others = [t for t in session.matrix_targets(self) if t != case.target]
            try:
                records, tune = gpu_phase.run_case(
                    case,
                    records,
                    session.workers.get("gpu", import_env=case.import_env),
                    gpu,
                    others,
                    retune=self.config.getoption("harness_retune"),
                    stored=session.stored_winners(),
                )
            except Exception as exc:  # noqa: BLE001 - the GPU phase's failure is the case's, never its builds'
                records, tune = tune_record.failed_tune(
                    case, records, f"the GPU phase failed: {type(exc).__name__}: {exc}"
                )
            tune_runtime = tune.runtime if tune.runtime is not None else Runtime()
            if device_note:
                tune_runtime = tune_runtime.updated(device_as=device_note)
            phases = tune_runtime.phases_s or Phases()
            tune = dataclasses.replace(
                tune, runtime=tune_runtime.updated(phases_s=phases.updated(compile=round(compile_s, 3)))
            )
            bad += [
                f"{r.config_id}: on {gpu.name}: {r.runtime.status}: {(r.runtime.error or '')[:500]}"
                for r in records
                if r.runtime and r.runtime.status not in ("ok", "not_launched")
            ]
            if tune.status != "ok":
                bad.append(f"on {gpu.name}: {tune.error}")
            records.append(tune)
        records = [dataclasses.replace(r, case_id=case.id, case_records=len(records)) for r in records]
        for record in records:
            self.user_properties.append((RECORD_PROPERTY, json.dumps(record.to_dict())))
        if bad:
            failed = len({line.split(":", 1)[0] for line in bad})  # a config may fail twice (CPU check, device)
            raise CaseFailed(f"{failed} of {len(case.configs)} config(s) failed:\n" + "\n".join(bad))

    def _capture_failed(self, failed: CaptureFailedRef) -> None:
        """A compiled entry that could not be captured here: one failed record saying why, nothing built."""
        case = self.case
        from harness.matrix.entry import shape_key

        said = failed.said(case.target, shape_key(case.shape), case.dtype)
        target = catalogue()[case.target]
        base = {"kernel": case.kernel, "dtype": case.dtype, "shape": case.shape, "target": case.target,
                "arch": target.arch, "vendor": target.vendor, "triton": case.triton, "config": {},
                "config_id": config_id({}), "meta": {}, "origin": NOT_CAPTURED, "mode": "compile", "kernel_hash": failed.source_hash,
                "environment": case.environment.name, "env": case.environment.as_dict(), "case_id": case.id,
                "deciding_environment": case.deciding, "case_records": 1}  # fmt: skip
        record = Record.built(base, CompileReply.from_json({"status": "error", "error": f"not captured: {said}"}))
        self.user_properties.append((RECORD_PROPERTY, json.dumps(record.to_dict())))
        raise CaseFailed(f"compiled entry {failed.entry} not captured: {said}")

    def _run_configs(self, session: Any, spec: Any, kernel_hash: str, prebuild_launchers: bool = False) -> list[Record]:
        """Every config of the case: compiles in parallel over this process's share of the cores."""
        case = self.case
        if case.is_interpret:
            kind, parallel = "interpret", 1
            jobs: list[Job] = [interpret_job(case, e) for e in case.configs]
            arch = vendor = "cpu"
        else:
            kind, parallel = "compile", compile_parallelism()
            jobs = [compile_job(case, e, str(session.out), prebuild_launchers) for e in case.configs]
            target = catalogue()[case.target]
            arch, vendor = target.arch, target.vendor
        # unchanged jobs come from the result cache; the rest run in the workers, and what they return is kept
        # (the cache keeps a reply's JSON; a hit is read back as the reply it was)
        keys = [result_cache.key(kind, job, kernel_hash) for job in jobs]
        replied: type[Reply] = InterpretReply if case.is_interpret else CompileReply
        found: list[Reply | None] = []
        for k in keys:
            hit = result_cache.lookup(kind, k, session.out)
            found.append(None if hit is None else replied.from_json(hit))
        todo = [i for i, hit in enumerate(found) if hit is None]
        ran = session.workers.map(
            kind, [jobs[i] for i in todo], case.timeout_s, parallel, case.environment, case.import_env
        )
        for i, reply in zip(todo, ran):
            result_cache.store(kind, keys[i], reply.to_json(), session.out)
            found[i] = reply
        results = [r for r in found if r is not None]
        assert len(results) == len(jobs), "a job without a result"
        records = []
        for entry, result in zip(case.configs, results):
            cfg = entry.as_dict()
            meta, _ = spec.split_config(cfg)
            base = {
                "kernel": case.kernel,
                "dtype": case.dtype,
                "shape": {} if case.is_interpret else case.shape,
                "target": case.target,
                "arch": arch,
                "vendor": vendor,
                "triton": case.triton,
                "config": cfg,
                "config_id": config_id(cfg),
                "meta": meta,
                "origin": entry.origin,
                "mode": "interpret" if case.is_interpret else "compile",
                "kernel_hash": kernel_hash,
                "environment": case.environment.name,
                "env": case.environment.as_dict(),
                "case_id": case.id,
                "deciding_environment": case.deciding,
                "import_env": dict(case.import_env),
            }
            if isinstance(result, CompileReply) and result.inductor.entry is not None and result.status == "ok":
                # a kernel Inductor generated: its config's host check, made at capture, is its correctness (the
                # build knows nothing of it, so a changed check changes no build and no cache key)
                result = result.updated(correctness=inductor_ref.check_of(entry.check, case.shape))
            records.append(Record.built(base, result, leave=("triton", "run_s")))
        return records

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            from harness.render.escaping import CONTROL

            return CONTROL.sub("", str(excinfo.value))  # a compiler's or kernel's text must not drive the terminal
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int, str]:
        from harness.render.escaping import plain

        return self.path, 0, plain(self.name)  # pytest's failure header shows it: inert, as every other output


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
        return (
            f"numpy {'.'.join(map(str, numpy_version))} breaks triton {triton_version}'s interpreter; install numpy<2.4"
        )
    return None
