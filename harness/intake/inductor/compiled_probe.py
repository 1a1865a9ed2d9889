"""A ``compiled:`` entry's capture per target, in children: one child per target face serves every compiled entry
of a matrix (torch, Dynamo and Inductor imported once per face), each shape and dtype announced before it is
compiled, so one that hangs, crashes or ends its child is that entry's one-line error and the entries after it get
a child of their own (:mod:`harness.intake.child_probe`, the op capture's runner).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any

from harness.intake import child_probe
from harness.intake.inductor.captured import CapturedGraph
from harness.support.settings import timeout_s

_CHILD = r"""
import tempfile
from harness.intake.inductor import inductor_face
from harness.intake.virtual_device import face  # the face is worn by the prelude (HARNESS_FACE); Inductor's now
try:
    inductor_face.wear(tempfile.mkdtemp(prefix="harness-inductor-"), face.worn())
    failed = None
except inductor_face.InductorFaceError as exc:
    failed = str(exc)
from harness.intake.inductor.compiled import CompiledCaptureError, capture_table
from harness.intake.importing import KernelLoadError, import_attr
imported()
n = 0
for j, e in enumerate(ENTRIES):
    importing(j, -1)
    why = failed
    for ref in (e["ref"], e["inputs"]):
        if why is None:
            try:
                import_attr(ref)
            except KernelLoadError as exc:
                why = str(exc)
    for k, (shape, dtype) in enumerate([(s, d) for s in e["shapes"] for d in e["dtypes"]]):
        say(j, k)
        if why is not None:
            result(n, [shape, dtype, why])
        else:
            try:
                table = capture_table(e["ref"], e["inputs"], shape, e["options"], dtype, e["mode"], e["factory"],
                                      e["name"], e["dynamic"])
                result(n, [shape, dtype, table])
            except (CompiledCaptureError, KernelLoadError) as exc:
                result(n, [shape, dtype, str(exc)])
        n += 1
done()
"""


@dataclass(frozen=True)
class Request:
    """One compiled entry to capture: its name, the function (or factory) and inputs references, shapes, dtypes,
    the ``torch.compile`` mode and Inductor options."""

    name: str
    ref: str
    inputs: str
    shapes: tuple[dict[str, int], ...]
    dtypes: tuple[str, ...]
    mode: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    factory: bool = False
    dynamic: bool = False

    def entry(self) -> dict[str, Any]:
        return {"name": self.name, "ref": self.ref, "inputs": self.inputs, "shapes": list(self.shapes),
                "dtypes": list(self.dtypes), "mode": self.mode, "options": dict(self.options), "factory": self.factory,
                "dynamic": self.dynamic}  # fmt: skip

    def pairs(self) -> list[tuple[dict[str, int], str]]:
        return [(s, d) for s in self.shapes for d in self.dtypes]


@dataclass(frozen=True)
class Outcome:
    """One entry's capture on one target: why it failed in one line (then no tables), else per shape and dtype
    the table (:func:`harness.intake.inductor.compiled.capture_table`) or why that one failed."""

    why: str
    tables: tuple[tuple[dict[str, int], str, CapturedGraph | str], ...]


def remembered(requests: list[Request], target: str) -> list[Outcome]:
    """:func:`capture`, with every outcome remembered on disk under what it depends on (the entry, the target,
    torch, the user's files, the capture's own code, the host check's limits): a matrix read again (by each of a run's processes, by
    ``--resume``) does not compile the functions again, nor wait again for one that hangs or crashes. A failure of
    the host (a full disk: :mod:`harness.model.host_failures`) is never kept, and ``HARNESS_RESULT_CACHE=0``
    (``--no-reuse``) reads no failure an earlier run kept: a capture that failed for a passing reason is tried again
    so, once per run (the run's own processes, its xdist workers, still read what it kept)."""
    from harness.model import host_failures
    from harness.support.cache import reuse_enabled

    keys = [_key(r, target) for r in requests]
    found: list[Outcome | None] = [_read(k, failures=reuse_enabled()) for k in keys]
    todo = [i for i, o in enumerate(found) if o is None]
    for i, outcome in zip(todo, capture([requests[i] for i in todo], target) if todo else []):
        found[i] = outcome
        said = [outcome.why] + [t for _, _, t in outcome.tables if isinstance(t, str)]
        if not any(host_failures.of_text(w) for w in said):
            _write(keys[i], outcome)
    return [o for o in found if o is not None]


def _key(request: Request, target: str) -> str:
    from importlib import metadata
    from pathlib import Path

    from harness.intake import loader
    from harness.intake.launches import op_probe

    try:
        torch = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch = ""
    stamps = [loader.source_hash(ref) for ref in (request.ref, request.inputs)]
    own = op_probe.code_stamp(Path(__file__).resolve().parents[1])
    # what the host check was given (its budget, the call's limit it shares) decides what it reached
    budget = [timeout_s(v) for v in ("HARNESS_CHECK_BUDGET_S", "HARNESS_CALLBACK_TIMEOUT_S")]
    text = json.dumps([request.entry(), target, torch, stamps, own, sys.executable, budget], sort_keys=True,
                      default=str)  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _path(key: str) -> Any:
    from harness.support.cache import cache_dir

    return cache_dir() / "compiled-capture" / f"{key}.json"


def _this_run() -> str:
    """What names the running ``harness run`` across its processes (its shared facts folder), or ``""``."""
    from harness.intake.facts import SHARED_ENV

    return os.environ.get(SHARED_ENV, "")


def _read(key: str, failures: bool = True) -> Outcome | None:
    """The kept outcome (a list of tables; a failure as ``{"why": ..., "tables": [...], "run": ...}``), or None.
    ``failures`` false: a failure is read only where this very run kept it."""
    try:
        kept = json.loads(_path(key).read_text())
        if isinstance(kept, dict):
            if not failures and not (_this_run() and kept.get("run") == _this_run()):
                return None
            return Outcome(str(kept["why"]), tuple(_checked(t) for t in kept["tables"]))
        return Outcome("", tuple(_checked(t) for t in kept))
    except (OSError, ValueError, TypeError, KeyError):
        return None  # not captured yet, or a damaged file: capture again


def _write(key: str, outcome: Outcome) -> None:
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tables = [[shape, dtype, t if isinstance(t, str) else dict(t.json)] for shape, dtype, t in outcome.tables]
        failed = outcome.why or any(isinstance(t, str) for _, _, t in outcome.tables)
        tmp.write_text(json.dumps({"why": outcome.why, "tables": tables, "run": _this_run()} if failed else tables))
        tmp.replace(path)
    except OSError:
        pass  # an unwritable cache only costs the next read the capture again


def capture(requests: list[Request], target: str, import_env: tuple[tuple[str, str], ...] = ()) -> list[Outcome]:
    """Each request captured under ``target``'s face, in as few children as it takes."""
    from harness.intake.virtual_device import face

    # Triton's interpreter from the child's start: each kernel Inductor writes is then an interpreted function, which
    # the capture records as it would a compiled one and the check runs on the CPU (harness.intake.inductor.compiled_check)
    env = tuple(sorted(dict(import_env, **{face.ENV: target, "TRITON_INTERPRET": "1"}).items()))
    out: list[Outcome | None] = [None] * len(requests)
    todo = list(range(len(requests)))
    while todo:
        got = child_probe.run(_CHILD, [requests[i].entry() for i in todo], env, call_limit="HARNESS_CALLBACK_TIMEOUT_S")
        # the entry the child was on when it ended (its index in this child's list); clean: none
        at = None if got.clean else (int(got.last[0]) if got.last is not None else 0)
        base, left = 0, []
        for pos, i in enumerate(todo):
            pairs = requests[i].pairs()
            reported = [got.results.get(base + k) for k in range(len(pairs))]
            base += len(pairs)
            if all(r is not None for r in reported):
                try:
                    out[i] = Outcome("", tuple(_checked(r) for r in reported))
                except ValueError as exc:
                    out[i] = Outcome(f"compiling {requests[i].name} on {target}: {exc}", ())
            elif at is None or pos < at:
                out[i] = Outcome(f"compiling {requests[i].name} on {target}: the child's report is incomplete", ())
            elif pos == at:
                out[i] = Outcome(_why(got, requests[i], target), ())
            else:
                left.append(i)  # not reached: the next child
        todo = left
    return [o for o in out if o is not None]


def _checked(reported: Any) -> tuple[dict[str, int], str, CapturedGraph | str]:
    """A reported [shape, dtype, table] read once into its typed graph (or the line saying why that one failed)."""
    if not isinstance(reported, list) or len(reported) != 3:
        raise ValueError("a compiled capture's report is not a [shape, dtype, table] triple")
    shape, dtype, table = reported
    if not isinstance(shape, dict) or not isinstance(dtype, str) or not isinstance(table, (dict, str)):
        raise ValueError("a compiled capture's report is not a [shape, dtype, table] triple")
    return shape, dtype, table if isinstance(table, str) else CapturedGraph.of(table)


def _why(got: child_probe.Outcome, request: Request, target: str) -> str:
    call = int(got.last[1]) if got.last is not None and len(got.last) > 1 else -1
    if call >= 0:
        shape, dtype = request.pairs()[call]
        where = f"compiling {request.name} ({request.ref}) on {target} for {shape} {dtype}"
    else:
        where = f"importing {request.name}'s modules on {target}"
    if got.timed_out:
        limit = timeout_s("HARNESS_CALLBACK_TIMEOUT_S" if call >= 0 else "HARNESS_IMPORT_TIMEOUT_S")
        return f"{where} did not return within {limit:g} s (it hangs?)"
    if got.returncode < 0:
        return f"{where} killed the process ({signal.Signals(-got.returncode).name})"
    return f"{where} ended the process (exit code {got.returncode}) instead of returning" + (
        f" ({got.stderr_tail})" if got.stderr_tail else ""
    )
