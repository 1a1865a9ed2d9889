"""Where ``dict[str, Any]`` or ``Mapping[str, Any]`` (a read-only view of the same untyped payload) may still appear
in the harness, and why: a list, so that a new one is a decision.

Two kinds are allowed:

- ``edge``: JSON or YAML read or written at that line (a results file, a cache entry, a request on the wire, a
  report's JSON, a repro script's data, what the child of a probe prints), decoded into or encoded from a typed
  object beside it;
- ``config``: a kernel's shape, config or launch arguments, whose keys are the kernel's own names (its dims,
  constexprs and launch options: ``BLOCK_M``, ``num_warps``, ``out``), and Triton's options and metadata and the
  compiler tools' reports, whose keys are theirs (a build's figures, gathered by those names, become
  :class:`~harness.model.payloads.Resources` in the reply).

A worker's reply is never one: each job's answer is a frozen class (:mod:`harness.model.replies`) built by the
worker's constructors and read back by the pool as that class, refusing a key it does not know. A module not
listed, or one whose count grew, fails here with its lines.
"""

from __future__ import annotations

import re
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "harness"
PATTERN = re.compile(r"\b(dict|Mapping)\[str, Any\]")

ALLOWED: dict[str, tuple[int, str]] = {
    # module: (at most this many, kind)
    "analysis/adaptation.py": (1, "config"),
    "analysis/portability.py": (1, "config"),
    "analysis/stored_verdicts.py": (3, "edge"),
    "analysis/verdicts.py": (1, "edge"),
    "authoring/decorated.py": (7, "config"),
    "authoring/spec.py": (7, "config"),
    "authoring/spec_shapes.py": (3, "config"),
    "compiling/compile.py": (7, "edge+config"),  # the figures cache file; the tools' figures; argument values
    "compiling/launchspec.py": (11, "config"),
    "compiling/limits.py": (1, "config"),
    "compiling/ptxas.py": (2, "config"),
    "compiling/repro.py": (5, "edge"),  # the script's CASE literal, for a spec kernel and for an Inductor kernel
    "compiling/repro_main.py": (3, "edge"),
    "compiling/resources.py": (4, "config"),
    # compiled capture: Inductor's own metadata and the capture child's JSON, read once into typed graphs
    # (harness.intake.inductor.captured) where it comes back
    # Inductor's compile meta and options as its autotuner makes them (for the build and for a repro script)
    "compiling/compiled_build.py": (4, "config"),
    "intake/inductor/compiled.py": (2, "edge"),
    "intake/inductor/compiled_probe.py": (1, "edge"),  # an entry as the capture child is given it
    "intake/inductor/host_graph.py": (1, "edge"),  # a host call's keyword arguments (the user's function's, as given)
    "intake/inductor/region_check.py": (1, "edge"),  # the regions' kernels as the capture's JSON table
    "intake/inductor/compiled_regions.py": (3, "edge"),  # the op's own call arguments; the kernels as JSON
    "intake/inductor/inductor_face.py": (3, "edge"),
    "intake/inductor/inductor_launches.py": (
        4,
        "edge",
    ),  # each launch's arguments and each choice; a kernel as the table's JSON
    "matrix/compiled_entries.py": (1, "edge"),  # the YAML entry as given
    "intake/inductor/inductor_spec.py": (7, "config"),  # the config a kernel is held to; Triton's asm by kind
    "authoring/correctness.py": (1, "config"),  # the poisoned ``out`` the kernel's launch is called with
    "device/detection.py": (3, "edge"),
    "device/operations.py": (1, "config"),
    "device/repro_launch.py": (4, "edge+config"),  # the repro script's LAUNCH data and the shape it replays
    "execution/agreement.py": (1, "config"),  # a captured launch's keyword arguments
    "execution/pool.py": (4, "edge"),
    "execution/result_cache.py": (3, "edge"),
    "execution/worker_main.py": (1, "edge"),
    "matrix/cases.py": (1, "config"),
    "matrix/configs.py": (2, "config"),
    "intake/virtual_device/face.py": (5, "edge"),
    "intake/facts.py": (10, "config"),
    "matrix/kernel_entries.py": (2, "edge"),
    "intake/launches/launch_groups.py": (7, "config"),
    "intake/launches/op_probe.py": (1, "edge"),
    "intake/launches/ops.py": (9, "edge"),  # + the compiled regions' kernels in the launch table
    "matrix/ops_entries.py": (
        4,
        "edge",
    ),  # the matrix entry as YAML gave it, read by op_request, op_refs, region_entries
    "matrix/reading.py": (2, "edge"),
    "model/jobs.py": (10, "edge"),
    "model/payloads.py": (4, "edge"),
    "model/records.py": (6, "config"),  # + the case's fields a record is built from with its reply
    "model/targets.py": (2, "edge"),
    "render/compare.py": (3, "edge"),  # compare --json: the comparison, its changes, its judged figures
    "results/schema.py": (4, "edge"),
    "results/store.py": (2, "edge"),
    "support/tritoncompat.py": (2, "config"),
    "support/torchcompat.py": (1, "config"),  # the Inductor options a torch.compile mode stands for
    "tuning/gpu_phase.py": (1, "config"),
    # read-only views of the same untyped payloads (``Mapping[str, Any]``), counted since 2026-12-05
    "analysis/compare/diff.py": (1, "config"),  # the configs of a column, for the grouping
    "analysis/compare/groups.py": (3, "config"),
    "intake/launches/capture.py": (1, "config"),
    "intake/inductor/inductor_ref.py": (2, "config"),  # a config and a shape, looked up by their canonical JSON
    "model/kernel_refs.py": (1, "config"),  # a slot asked for by the shape a case holds
    "model/build_facts.py": (
        4,
        "config",
    ),  # the autotune key's values, the heuristics' constexprs, a face's answers, Inductor's options
    "model/ids.py": (3, "config"),
    "model/run_info.py": (2, "config"),  # the selection's shapes and configs
    "model/runtime.py": (2, "config"),
    "tuning/tune_record.py": (1, "config"),
    "tuning/winners.py": (3, "config"),
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
    assert {kind for _, kind in ALLOWED.values()} == {"edge", "config", "edge+config"}  # no worker reply
