"""Where ``dict[str, Any]`` may still appear in the harness, and why: a list, so that a new one is a decision.

Three kinds are allowed:

- ``edge``: JSON or YAML read or written at that line (a results file, a cache entry, a request on the wire, a
  report's JSON, a repro script's data, what the child of a probe prints), decoded into or encoded from a typed
  object beside it;
- ``config``: a kernel's shape or config, whose keys are the kernel's own names (its dims, constexprs and launch
  options: ``BLOCK_M``, ``num_warps``), and Triton's options and metadata, whose keys are Triton's;
- ``reply``: a worker's reply as built on the worker's side and read back by the stage that asked (compile
  figures, interpreter checks, device timings and baselines, the tune record's figures). These are the payloads
  still to be typed as the jobs are (:mod:`harness.model.jobs`); the count per module may only go down.

A module not listed, or one whose count grew, fails here with its lines.
"""

from __future__ import annotations

import re
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "harness"
PATTERN = re.compile(r"\bdict\[str, Any\]")

ALLOWED: dict[str, tuple[int, str]] = {
    # module: (at most this many, kind)
    "analysis/adaptation.py": (1, "config"),
    "analysis/portability.py": (1, "config"),
    "analysis/stored_verdicts.py": (2, "edge"),
    "analysis/verdicts.py": (1, "edge"),
    "authoring/decorated.py": (6, "config"),
    "authoring/spec.py": (1, "config"),
    "authoring/spec_shapes.py": (3, "config"),
    "build/compile.py": (9, "reply"),
    "build/launchspec.py": (7, "config"),
    "build/limits.py": (2, "config"),
    "build/ptxas.py": (2, "config"),
    "build/repro.py": (3, "edge"),
    "build/repro_main.py": (3, "edge"),
    "build/resources.py": (4, "config"),
    "device/baselines.py": (7, "reply"),
    "device/correctness.py": (5, "reply"),
    "device/detection.py": (3, "edge"),
    "device/interpret.py": (2, "reply"),
    "device/operations.py": (16, "reply"),
    "device/repro_launch.py": (4, "reply"),
    "execution/agreement.py": (2, "reply"),
    "execution/pool.py": (7, "edge"),
    "execution/result_cache.py": (3, "edge"),
    "execution/worker_main.py": (1, "edge"),
    "matrix/cases.py": (1, "config"),
    "matrix/configs.py": (2, "config"),
    "matrix/face.py": (5, "edge"),
    "matrix/facts.py": (10, "config"),
    "matrix/kernel_entries.py": (2, "edge"),
    "matrix/launch_groups.py": (4, "config"),
    "matrix/op_probe.py": (1, "edge"),
    "matrix/ops.py": (2, "edge"),
    "matrix/ops_entries.py": (3, "edge"),  # the matrix entry as YAML gave it, read by op_request and op_refs
    "matrix/reading.py": (2, "edge"),
    "model/jobs.py": (3, "edge"),
    "model/payloads.py": (1, "edge"),
    "model/records.py": (4, "config"),
    "model/targets.py": (2, "edge"),
    "model/timings.py": (1, "edge"),
    "pytest_plugin/session.py": (2, "reply"),
    "render/compare.py": (2, "edge"),
    "results/schema.py": (4, "edge"),
    "results/store.py": (2, "edge"),
    "support/tritoncompat.py": (2, "config"),
    "tuning/gpu_phase.py": (8, "reply"),
    "tuning/tune_record.py": (5, "reply"),
    "tuning/winners.py": (6, "reply"),
}


def _found() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(HARNESS.rglob("*.py")):
        lines = [
            f"{n}: {line.strip()}" for n, line in enumerate(path.read_text().splitlines(), 1) if PATTERN.search(line)
        ]
        if lines:
            out[path.relative_to(HARNESS).as_posix()] = lines
    return out


def test_dict_str_any_appears_only_where_listed_and_never_more_often() -> None:
    problems = []
    for module, lines in _found().items():
        if module not in ALLOWED:
            problems.append(f"{module} is not listed (a typed payload instead?): " + " | ".join(lines))
        elif len(lines) > ALLOWED[module][0]:
            problems.append(f"{module}: {len(lines)} > {ALLOWED[module][0]}: " + " | ".join(lines))
    assert not problems, "\n".join(problems)


def test_the_list_holds_no_module_that_no_longer_needs_it() -> None:
    """A count that went down is lowered here too, so the list stays the truth (and the debt is visible)."""
    found = _found()
    stale = {m: (n, len(found.get(m, []))) for m, (n, _) in ALLOWED.items() if len(found.get(m, [])) != n}
    assert not stale, f"lower these counts to what the code has: {stale}"
    assert {kind for _, kind in ALLOWED.values()} == {"edge", "config", "reply"}
