"""An ``op:`` entry's capture per target: the library imported and the op captured under that target's virtual
device (:mod:`harness.intake.virtual_device.face`), never in the harness's own process. An op (or its ``inputs`` function) that
hangs, exits or crashes while it is captured is one line naming the op, the target, the shape and the dtype, never
a hung or silently ended ``validate``.

The capture (:func:`harness.intake.launches.ops.launch_table`) runs the library's Python for every shape and dtype of the
entry, with launches recorded and not run, and reports what the op launches there: each kernel's distinct
launches in order and each launch's configs. The child is :mod:`harness.intake.child_probe`'s (its own session,
the import and call limits, a nonce on its lines). One child serves every op of a matrix that wears the same face
with the same ``import_env`` (:func:`prefetch`): torch and a library such as fla-core are imported once per target,
not once per op. Each entry announces its import and each capture before it makes it, so a child that hangs,
exits or crashes is that entry's error alone; the entries after it get a child of their own. A capture that
returned every time is remembered per op, inputs, shapes, dtypes, target, variables and source stamps (the cache
directory), so a matrix read again does not pay for a library's import again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import signal
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict

from harness.intake import child_probe, loader
from harness.support.settings import timeout_s

_CHILD = r"""
from harness.intake.virtual_device import face  # worn by the prelude (HARNESS_FACE), before the library is imported
from harness.intake.launches import ops
from harness.intake.launches.capture import CaptureError
from harness.intake.importing import KernelLoadError, import_attr
imported()
base = 0
for j, e in enumerate(ENTRIES):
    importing(j, -1)
    failed = None
    for key, ref in sorted(e["refs"].items()):
        try:
            import_attr(ref)
        except KernelLoadError as exc:
            failed = [key, str(exc)]
            break
    result(base, failed)
    pairs = [(s, d) for s in e["shapes"] for d in e["dtypes"]]
    for k, (shape, dtype) in enumerate(pairs if failed is None else []):
        say(j, k)
        try:
            table = ops.launch_table(e["refs"]["op"], e["refs"]["inputs"], shape, dtype)
            result(base + k + 1, [shape, dtype, table])
        except (CaptureError, KernelLoadError, face.FaceError) as exc:
            result(base + k + 1, [shape, dtype, str(exc)])
    base += 1 + len(pairs)
done()
"""


@dataclass(frozen=True)
class Captured:
    """What one target's child found: the module that could not be imported (its key and why), else each shape and
    dtype's launch table (:func:`harness.intake.launches.ops.launch_table`), or why its capture failed."""

    import_error: tuple[str, str] | None
    captures: tuple[tuple[dict[str, Any], str, dict[str, Any] | str], ...]


class Entry(TypedDict):
    """One op as its capture child reads it (JSON on the child's stdin)."""

    refs: dict[str, str]
    shapes: list[dict[str, int]]
    dtypes: list[str]


@dataclass(frozen=True)
class Request:
    """One op to capture for one target: its name as the matrix gives it, its resolved ``refs`` (op, inputs,
    reference), its shapes and dtypes, and the ``import_env`` it is imported under."""

    op: str
    refs: tuple[tuple[str, str], ...]
    shapes: tuple[dict[str, int], ...]
    dtypes: tuple[str, ...]
    import_env: tuple[tuple[str, str], ...]
    target: str

    def entry(self) -> Entry:
        return {"refs": dict(self.refs), "shapes": list(self.shapes), "dtypes": list(self.dtypes)}

    def env(self) -> tuple[tuple[str, str], ...]:
        from harness.intake.virtual_device import face

        return tuple(sorted(dict(self.import_env, **{face.ENV: self.target}).items()))

    def key(self) -> str:
        refs = [ref for _, ref in self.refs]
        return json.dumps([self.entry(), self.env(), _stamps(refs), sys.executable, _CHILD, _own_stamp()], default=str)


#: what a child of this process reported per request key: ("", the report) or (why it failed, [])
_DONE: dict[str, tuple[str, list[Any]]] = {}


def check(
    op: str,
    refs: dict[str, str],
    shapes: list[dict[str, int]],
    dtypes: list[str],
    import_env: tuple[tuple[str, str], ...],
    target: str,
) -> tuple[str, Captured | None]:
    """(why capturing ``op`` (its resolved ``refs``: op, inputs, reference) for ``target`` hung, crashed or ended the
    child for some shape and dtype, in one line, or ``""``; what it captured when it returned)."""
    request = Request(op, tuple(sorted(refs.items())), tuple(shapes), tuple(str(d) for d in dtypes), import_env, target)
    key = request.key()
    remembered = _remembered(key)
    if remembered is not None:
        return "", remembered
    if key not in _DONE:
        prefetch([request])
    why, reported = _DONE[key]
    if why:
        return why, None
    try:
        return "", _captured(reported)
    except (ValueError, TypeError):
        return f"capturing op {op}: the child's report is not what it says", None


def prefetch(requests: list[Request]) -> None:
    """Capture ``requests`` not captured yet, one child per face and ``import_env`` for all of them (in the order
    given); each outcome is kept for :func:`check`, and each capture that returned is remembered on disk."""
    groups: dict[tuple[tuple[str, str], ...], list[tuple[str, Request]]] = {}
    for request in requests:
        key = request.key()
        if key not in _DONE and _remembered(key) is None:
            groups.setdefault(request.env(), []).append((key, request))
    for env, todo in groups.items():
        unique = list(dict(todo).items())
        outcomes = _capture([r.entry() for _, r in unique], env, [f"{r.op} (as on {r.target})" for _, r in unique])
        for (key, _), (why, reported) in zip(unique, outcomes):
            _DONE[key] = (why, reported)
            if not why:
                try:
                    _captured(reported)
                    marker = _marker(key)
                    marker.parent.mkdir(parents=True, exist_ok=True)
                    marker.write_text(json.dumps(reported))
                except (ValueError, TypeError):
                    pass  # check() says the report is malformed
                except OSError:
                    pass  # an unwritable cache only costs the next read the probe again


def _remembered(key: str) -> Captured | None:
    marker = _marker(key)
    if not marker.is_file():
        return None
    try:
        return _captured(json.loads(marker.read_text()))
    except (OSError, ValueError, TypeError):
        return None  # a damaged marker: capture again


def _captured(reported: Any) -> Captured:
    """The child's report, checked field by field."""
    failed, *captures = reported
    if failed is not None and not (
        isinstance(failed, list) and len(failed) == 2 and all(isinstance(x, str) for x in failed)
    ):
        raise ValueError("import error")
    out = []
    for shape, dtype, table in captures:
        if not isinstance(shape, dict) or not isinstance(dtype, str):
            raise ValueError("capture")
        if not isinstance(table, str):
            _check_table(table)
        out.append((shape, dtype, table))
    return Captured(tuple(failed) if failed else None, tuple(out))  # type: ignore[arg-type]


def _check_table(table: Any) -> None:
    """A launch table as :func:`harness.intake.launches.ops.launch_table` writes it, or ValueError."""
    if not isinstance(table, dict) or not isinstance(table.get("device"), str):
        raise ValueError("table")
    for la in table.get("launches", None) or []:
        if not (
            isinstance(la, dict)
            and isinstance(la.get("kernel"), str)
            and all(isinstance(la.get(k), int) and not isinstance(la.get(k), bool) for k in ("launch", "of"))
            and isinstance(la.get("tuned"), bool)
            and isinstance(la.get("configs"), list)
            and la["configs"]
            and all(isinstance(c, dict) and all(isinstance(k, str) for k in c) for c in la["configs"])
        ):
            raise ValueError("launch")
    compiled = table.get("compiled", None) or []
    if not isinstance(compiled, list) or not all(
        isinstance(k, dict) and isinstance(k.get("name"), str) and isinstance(k.get("configs"), list) for k in compiled
    ):
        raise ValueError("compiled")
    if not table.get("launches") and not compiled:
        raise ValueError("no launches")


def _capture(entries: list[Entry], env: tuple[tuple[str, str], ...], names: list[str]) -> list[tuple[str, list[Any]]]:
    """Each entry's (why its capture failed, or ``""``; its report: the import error, then each shape and dtype's
    table), from as few children as it takes: one, unless an entry ends its child, whose followers get the next."""
    out: list[tuple[str, list[Any]] | None] = [None] * len(entries)
    todo = list(range(len(entries)))
    while todo:
        got = child_probe.run(_CHILD, [entries[i] for i in todo], env, call_limit="HARNESS_CALLBACK_TIMEOUT_S")
        at = int(got.last[0]) if not got.clean and got.last is not None else None
        base, left = 0, []
        for pos, i in enumerate(todo):
            pairs = [(s, d) for s in entries[i]["shapes"] for d in entries[i]["dtypes"]]
            size = 1 + len(pairs)
            if pos == at or (at is None and not got.clean):
                out[i] = (_why(got, pairs, names[i]), [])
            elif base in got.results:
                first = got.results[base]
                if first is not None:  # an import failed: said once, no capture
                    out[i] = ("", [first])
                elif all(base + 1 + k in got.results for k in range(len(pairs))):
                    out[i] = ("", [None, *(got.results[base + 1 + k] for k in range(len(pairs)))])
            if out[i] is None:
                if at is not None and pos > at:
                    left.append(i)  # not reached: the next child
                else:
                    out[i] = (f"capturing op {names[i]}: the child's report is not what it says", [])
            base += size
        todo = left
    done = [o for o in out if o is not None]
    assert len(done) == len(entries), "an entry without an outcome"  # each pass settles its first unsettled entry
    return done


def _why(got: child_probe.Outcome, pairs: list[tuple[Any, str]], op: str) -> str:
    """Why the child that captured ``op`` did not return: where it was (its import, or a shape and dtype), how it
    ended."""
    call = int(got.last[1]) if got.last is not None else -1  # -1: its import
    capturing = call >= 0
    if capturing:
        shape, dtype = pairs[call]
        where = f"capturing op {op} for shape {shape} {dtype}"
    else:
        where = f"importing op {op}'s modules"
    if got.timed_out:
        limit = timeout_s("HARNESS_CALLBACK_TIMEOUT_S" if capturing else "HARNESS_IMPORT_TIMEOUT_S")
        return f"{where} did not return within {limit:g} s (it hangs?)"
    if got.returncode < 0:
        return f"{where} killed the process ({signal.Signals(-got.returncode).name})"
    return (
        f"{where} ended the process (exit code {got.returncode}) instead of returning: it calls sys.exit or os._exit"
        + (f" ({got.stderr_tail})" if got.stderr_tail and got.returncode else "")
    )


@lru_cache(maxsize=1)
def _own_stamp() -> str:
    """The capture's own code (a capture remembered by an older harness is not this one's)."""
    return code_stamp(Path(__file__).resolve().parents[1])


def code_stamp(package: Path) -> str:
    """Every module of the intake package and its rooms, whatever it is called (a hand-kept list once missed one), the
    catalogues the faces answer from, and what the captures' interpreter checks run with (the interpreter's
    patches, the correctness rule)."""
    model = package.parent / "model"
    digest = hashlib.sha256()
    checks = [package.parent / "support" / "interpreter_patches.py", package.parent / "authoring" / "correctness.py"]
    for path in sorted(package.rglob("*.py")) + [model / "faces.yaml", model / "targets.yaml"] + checks:
        if path in checks and not path.is_file():
            continue
        name = path.relative_to(package.parent).as_posix()
        digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _stamps(refs: list[str]) -> list[Any]:
    """What changes when the op's code does: the user's own files' hash, the installed modules' file stamps."""
    out: list[Any] = []
    for ref in refs:
        location = ref.rpartition(":")[0]
        out.append(loader.source_hash(ref))
        if not location.endswith(".py"):
            try:
                found = importlib.util.find_spec(location.split(".")[0])
            except (ImportError, ValueError):
                found = None
            origin = getattr(found, "origin", None) if found else None
            if origin:
                stat = Path(origin).stat()
                out.append([origin, stat.st_mtime_ns, stat.st_size])
    return out


def _marker(key: str) -> Path:
    from harness.support.cache import cache_dir

    return cache_dir() / "op-probe" / hashlib.sha256(key.encode()).hexdigest()[:32]
