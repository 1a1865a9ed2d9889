"""The closed vocabularies records speak in: a record's mode and status, a limit flag's severity, a target's
verdict, as types for the code that writes and reads them. ``harness.results.schema`` keeps its own sets (it imports nothing of the harness, so a damaged file is
refused before any of it loads); ``tests/test_import_graph.py`` checks the two agree."""

from __future__ import annotations

from typing import Final, Literal, get_args

#: what made a record: a static build, an interpreter check, a case's tuning on a GPU
Mode = Literal["compile", "interpret", "tune"]
#: how it ended; ``interpret-unsupported`` is the interpreter's limitation with its reason, never the kernel's
Status = Literal["ok", "mismatch", "error", "crash", "timeout", "interpret-unsupported"]

#: a limit flag: ``error`` (the launch is refused) or ``warn`` (near the limit)
Severity = Literal["error", "warn"]
#: a config on one target, decided by its default build (harness.analysis.verdicts), best first
Verdict = Literal["fits", "spills", "at risk", "exceeds", "failed", "incomplete"]

MODES: Final = frozenset(get_args(Mode))
STATUSES: Final = frozenset(get_args(Status))
INTERPRET_UNSUPPORTED: Final[Status] = "interpret-unsupported"
#: the origin of a record of a compiled entry that could not be captured (nothing was built: its status says why)
NOT_CAPTURED: Final = "capture"
