"""An ``op:`` entry's capture, one child per target: the library imported and the op captured under that target's
virtual device (:mod:`harness.matrix.face`), never in the harness's own process. An op (or its ``inputs``
function) that hangs, exits or crashes while it is captured is one line naming the op, the target, the shape and
the dtype, never a hung or silently ended ``validate``.

The capture (:func:`harness.matrix.ops.launch_table`) runs the library's Python for every shape and dtype of the
entry, with launches recorded and not run, and reports what the op launches there: each kernel's distinct
launches in order and each launch's configs. The child is :mod:`harness.matrix.child_probe`'s (its own session,
the import and call limits, a nonce on its lines). A capture that returned every time is remembered per op,
inputs, shapes, dtypes, target, variables and source stamps (the cache directory), so a matrix read again does not
pay for a library's import again.
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
from typing import Any

from harness.matrix import child_probe, loader
from harness.support.settings import timeout_s

_CHILD = r"""
from harness.matrix import face  # worn by the prelude (HARNESS_FACE), before the library is imported
from harness.matrix import ops
from harness.matrix.capture import CaptureError
from harness.matrix.importing import KernelLoadError, import_attr
e = ENTRIES[0]
failed = None
for key, ref in sorted(e["refs"].items()):
    try:
        import_attr(ref)
    except KernelLoadError as exc:
        failed = [key, str(exc)]
        break
imported()
result(0, failed)
if failed is None:
    for k, (shape, dtype) in enumerate((s, d) for s in e["shapes"] for d in e["dtypes"]):
        say(k, shape, dtype)
        try:
            table = ops.launch_table(e["refs"]["op"], e["refs"]["inputs"], shape, dtype)
            result(k + 1, [shape, dtype, table])
        except (CaptureError, KernelLoadError, face.FaceError) as exc:
            result(k + 1, [shape, dtype, str(exc)])
done()
"""


@dataclass(frozen=True)
class Captured:
    """What one target's child found: the module that could not be imported (its key and why), else each shape and
    dtype's launch table (:func:`harness.matrix.ops.launch_table`), or why its capture failed."""

    import_error: tuple[str, str] | None
    captures: tuple[tuple[dict[str, Any], str, dict[str, Any] | str], ...]


def check(
    op: str,
    refs: dict[str, str],
    shapes: list[dict[str, Any]],
    dtypes: list[str],
    import_env: tuple[tuple[str, str], ...],
    target: str,
) -> tuple[str, Captured | None]:
    """(why capturing ``op`` (its resolved ``refs``: op, inputs, reference) for ``target`` hung, crashed or ended the
    child for some shape and dtype, in one line, or ``""``; what it captured when it returned)."""
    from harness.matrix import face

    entry = {"refs": refs, "shapes": shapes, "dtypes": [str(d) for d in dtypes]}
    import_env = tuple(sorted(dict(import_env, **{face.ENV: target}).items()))
    key = json.dumps(
        [entry, import_env, _stamps(list(refs.values())), sys.executable, _CHILD, _own_stamp()], default=str
    )
    marker = _marker(key)
    if marker.is_file():
        try:
            return "", _captured(json.loads(marker.read_text()))
        except (OSError, ValueError, TypeError):
            pass  # a damaged marker: capture again
    why, reported = _check_cached(key, json.dumps(entry), import_env, f"{op} (as on {target})")
    if why:
        return why, None
    try:
        captured = _captured(reported)
    except (ValueError, TypeError):
        return f"capturing op {op}: the child's report is not what it says", None
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(reported))
    except OSError:
        pass  # an unwritable cache only costs the next read the probe again
    return "", captured


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
    """A launch table as :func:`harness.matrix.ops.launch_table` writes it, or ValueError."""
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
    if not table.get("launches"):
        raise ValueError("no launches")


@lru_cache(maxsize=64)
def _check_cached(
    _key: str, entry_json: str, import_env: tuple[tuple[str, str], ...], op: str
) -> tuple[str, list[Any]]:
    entry = json.loads(entry_json)
    got = child_probe.run(_CHILD, [entry], import_env, call_limit="HARNESS_CALLBACK_TIMEOUT_S")
    reported = [got.results.get(k) for k in range(len(got.results))]
    if got.clean and 0 in got.results:
        return "", reported
    pairs = [(s, d) for s in entry["shapes"] for d in entry["dtypes"]]
    if got.imported and got.last is not None:
        shape, dtype = pairs[int(got.last[0])]
        where = f"capturing op {op} for shape {shape} {dtype}"
    else:
        where = f"importing op {op}'s modules"
    if got.timed_out:
        limit = timeout_s("HARNESS_CALLBACK_TIMEOUT_S" if got.imported else "HARNESS_IMPORT_TIMEOUT_S")
        return f"{where} did not return within {limit:g} s (it hangs?)", []
    if got.returncode < 0:
        return f"{where} killed the process ({signal.Signals(-got.returncode).name})", []
    return (
        f"{where} ended the process (exit code {got.returncode}) instead of returning: it calls sys.exit or os._exit"
        + (f" ({got.stderr_tail})" if got.stderr_tail and got.returncode else "")
    ), []


@lru_cache(maxsize=1)
def _own_stamp() -> str:
    """The capture's own code (a capture remembered by an older harness is not this one's)."""
    here = Path(__file__).resolve().parent
    names = ("capture.py", "face.py", "face_tensors.py", "ops.py", "../model/faces.yaml")
    return hashlib.sha256(b"".join((here / n).read_bytes() for n in names)).hexdigest()[:16]


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
