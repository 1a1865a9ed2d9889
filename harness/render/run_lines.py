"""Lines about a run rather than its records' figures, shared by report.md and report.html: the shard runs a night
was made of, and the ``harness repro`` command of each failed or exceeding build."""

from __future__ import annotations

from collections.abc import Sequence

from harness.model.records import Record
from harness.model.run_info import RunInfo

#: what the reports' Reproduce section says it lists
REPRO_SAID = "Each failed or exceeding build, and each config whose GPU check failed, as a standalone Triton script"


def repro_commands(records: list[Record], run_dir: str, limit: int = 100) -> list[str]:
    """Each failed or limit-exceeding build, and each config whose GPU check failed, as the ``harness repro`` command
    that writes its standalone script (a GPU mismatch's with ``--out``: its inputs are saved beside the script)."""
    from harness.analysis.compare.evidence import gpu_mismatch, repro_args
    from harness.model.vocabulary import NOT_CAPTURED

    found = sorted(
        repro_args(r)
        for r in records
        if r.mode == "compile"
        and r.case_id
        and r.origin != NOT_CAPTURED  # nothing was built: no script rebuilds it
        and (r.status != "ok" or any(f.severity == "error" for f in r.flags) or gpu_mismatch(r))
    )
    more = [f"... {len(found) - limit} more"] if len(found) > limit else []
    return [f"harness repro {run_dir} {args}" for args in found[:limit]] + more


def run_dir(runs: Sequence[RunInfo]) -> str:
    """The run directory (or a night's folder) a command should name, as the report links it; RUN for several."""
    return (runs[0].dir or ".") if len(runs) == 1 else "RUN"


def night_lines(info: RunInfo) -> list[str]:
    """A night of shard runs reported as one run: which shard runs made it, then what makes it incomplete."""
    night = info.night
    if night is None:
        return []
    dirs = night.dirs or ()
    return [f"shard runs (of {night.total}): {', '.join(dirs)}"] + [
        f"INCOMPLETE night: {problem}" for problem in night.problems or ()
    ]
