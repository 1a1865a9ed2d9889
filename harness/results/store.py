"""A run on disk, read back: ``records.jsonl`` line by line (a line torn by a kill is skipped and counted) and
``results.json`` whole, bounded, validated against the results schema before any report, gate or history reads it."""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
from pathlib import Path
from typing import Any

from harness.model import host_failures
from harness.model.records import READABLE_SCHEMAS, Record
from harness.model.run_info import RunInfo
from harness.results.schema import record_problem, run_problem
from harness.support import safe_files


def complete_cases(records: list[Record]) -> tuple[set[str], list[Record]]:
    """The case ids whose every record is present, and the records of those cases (for a resume).

    A case's records are written together, but a kill can still cut a batch: a case
    with fewer records than it produced (``case_records``) runs again. So does a case
    a failure of the host cut short (a full disk: :mod:`harness.model.host_failures`),
    which says nothing of its kernel and builds once the cause is gone.
    """
    counts: dict[str, int] = {}
    expected: dict[str, int] = {}
    hosts: set[str] = set()
    for r in records:
        counts[r.case_id] = counts.get(r.case_id, 0) + 1
        expected[r.case_id] = r.case_records
        if r.status != "ok" and host_failures.of_text(r.error):
            hosts.add(r.case_id)
    done = {c for c, n in counts.items() if c and expected[c] == n and c not in hosts}
    return done, [r for r in records if r.case_id in done]


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Records of a ``records.jsonl``, and the line numbers that are not whole records (torn by a kill)."""
    good: list[dict[str, Any]] = []
    torn: list[int] = []
    safe_files.check_regular(path, "records file")
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):  # torn by a kill, or an integer over the digit limit
                torn.append(number)
                continue
            if isinstance(value, dict):
                good.append(value)
            else:
                torn.append(number)
    return good, torn


class ResultsFileError(Exception):
    pass


#: a results file larger than this is refused before it is read (a nightly with raw samples is tens of MiB)
MAX_RESULTS_BYTES = 1 << 30


def _read_doc(file: Path) -> Any:
    """A results file's JSON (gzip-compressed as archived), read bounded; every failure a ResultsFileError."""
    try:
        blob = safe_files.read_bytes(file, MAX_RESULTS_BYTES, "results file")
        if file.suffix == ".gz":
            with gzip.GzipFile(fileobj=io.BytesIO(blob)) as fh:
                blob = fh.read(MAX_RESULTS_BYTES + 1)
            if len(blob) > MAX_RESULTS_BYTES:
                raise ResultsFileError(f"{file}: decompresses to more than {MAX_RESULTS_BYTES >> 20} MiB")
        return json.loads(blob)
    except safe_files.InputFileError as exc:
        raise ResultsFileError(str(exc)) from None
    except (OSError, EOFError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        # ValueError: not JSON, or an integer over Python's digit limit
        raise ResultsFileError(f"{file}: cannot read results: {str(exc).split(';')[0][:300]}") from None


def load_results(path: Path) -> tuple[RunInfo, list[Record]]:
    """Read ``results.json`` (a file or a run directory holding one; ``results.json.gz`` as archived)."""
    file = path / "results.json" if path.is_dir() else path
    if path.is_dir() and not file.is_file() and (path / "results.json.gz").is_file():
        file = path / "results.json.gz"
    doc = _read_doc(file)
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if type(version) is not int or version not in READABLE_SCHEMAS:
        raise ResultsFileError(
            f"{file}: schema_version {version!r} is not one this harness reads "
            f"({', '.join(map(str, READABLE_SCHEMAS))})"
        )
    problem = run_problem(doc.get("run", {}), RunInfo)
    if problem:
        raise ResultsFileError(f"{file}: {problem}")
    run = RunInfo.from_json(doc.get("run", {}))
    raw = doc.get("records", [])
    if not isinstance(raw, list):
        raise ResultsFileError(f"{file}: field 'records' must be a list, got {type(raw).__name__}")
    jsonl = file.parent / "records.jsonl"
    if jsonl.exists():  # a FIFO or a device in its place is refused, not read
        try:
            lines, torn = read_jsonl(jsonl)
        except (OSError, safe_files.InputFileError) as exc:
            raise ResultsFileError(f"{jsonl}: cannot read records: {getattr(exc, 'strerror', None) or exc}") from None
        if torn:
            warning = (
                f"{jsonl}: skipped {len(torn)} line(s) that are not whole records (line {', '.join(map(str, torn[:5]))}"
                f"{' ...' if len(torn) > 5 else ''}): the run was killed while writing"
            )
            run = run.updated(read_warnings=(*(run.read_warnings or ()), warning))
        if len(lines) > len(raw):  # the run was killed between two rewrites of results.json
            raw = lines
    try:
        if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
            raise TypeError("records must be a list of objects")
        for i, r in enumerate(raw):
            problem = record_problem(r, Record)
            if problem:
                raise ResultsFileError(
                    f"{file}: record {i} ({str(r.get('kernel'))[:40]} {str(r.get('target'))[:20]} "
                    f"{str(r.get('config_id'))[:60]}): {problem}"
                )
        records = [Record.from_dict(r) for r in raw]
    except TypeError as exc:
        raise ResultsFileError(f"{file}: a record lacks required fields: {exc}") from None
    return run, [r if r.host else dataclasses.replace(r, host=run.host or "") for r in records]
