"""The one writer of a run's ``records.jsonl`` and ``results.json``, in the pytest controller process only.

Each case's records are appended to the JSONL in one write as they arrive (a kill leaves all or a torn tail);
``results.json`` — the run, the verdicts judged from every record so far, and the records — is rewritten at
most once a second and at the end, atomically. It sits apart from :mod:`harness.model.records` (the record model and
the reader) so that the model does not import the verdicts judged from it.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

from harness.analysis.stored_verdicts import stored
from harness.analysis.verdicts import judge
from harness.model.records import SCHEMA_VERSION, Record
from harness.model.run_info import RunInfo
from harness.support import safe_files


class ResultsWriter:
    """Writes records as they arrive; lives in the pytest controller process only.

    ``previous``: the records of an interrupted run being resumed. They are kept,
    and ``records.jsonl`` is first rewritten (atomically) without any torn line,
    so an appended record never joins a fragment.
    """

    def __init__(self, out_dir: Path, run: RunInfo, previous: list[Record] | None = None) -> None:
        self.out_dir = out_dir
        self.run = run
        self.records: list[Record] = list(previous or [])
        out_dir.mkdir(parents=True, exist_ok=True)
        self._last_write = 0.0
        jsonl = out_dir / "records.jsonl"
        if previous is not None:
            safe_files.write_atomic(jsonl, "".join(json.dumps(r.to_dict()) + "\n" for r in self.records))
        self._jsonl = safe_files.open_nofollow(jsonl, "a" if previous is not None else "w")
        self._write()

    def add(self, record: Record) -> None:
        self.add_many([record])

    def add_many(self, records: list[Record]) -> None:
        """One case's records, appended to the JSONL in a single write (a kill leaves all or a torn tail)."""
        self.records.extend(records)
        self._jsonl.write("".join(json.dumps(r.to_dict()) + "\n" for r in records))
        self._jsonl.flush()
        if time.monotonic() - self._last_write >= 1.0:
            self._write()

    def _write(self) -> None:
        doc = {
            "schema_version": SCHEMA_VERSION,
            "run": self.run.to_json(),
            **stored(judge(self.records)).to_json(),
            "records": [r.to_dict() for r in self.records],
        }
        safe_files.write_atomic(self.out_dir / "results.json", json.dumps(doc, indent=1))
        self._last_write = time.monotonic()

    def finish(self) -> None:
        self.run = self.run.updated(end=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        self._write()
        self._jsonl.close()
