"""An ``op:`` entry's capture, run first in a child: an op (or its ``inputs`` function) that hangs, exits or crashes
while it is captured is one line naming the op, the shape and the dtype, never a hung or silently ended ``validate``.

The capture (:func:`harness.matrix.ops.kernel_names`) runs the library's Python for every shape and dtype of the
entry, with launches recorded and not run. Before the matrix reader does that in its own process, a child does it
(:mod:`harness.matrix.child_probe`: its own session, the import and call limits, a nonce on its lines). An op that
raises is left to the reader, which says what it raised. A capture that returned every time is remembered per
op, inputs, shapes, dtypes, variables and source stamps (the cache directory), so a matrix read again does not pay
for a library's import twice.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import signal
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.matrix import child_probe, loader
from harness.support.settings import timeout_s

_CHILD = r"""
from harness.matrix import ops
from harness.matrix.importing import import_attr
for e in ENTRIES:
    for ref in e["refs"]:
        import_attr(ref)
imported()
for i, e in enumerate(ENTRIES):
    for shape in e["shapes"]:
        for dtype in e["dtypes"]:
            say(i, shape, dtype)
            try:
                ops.kernel_names(e["op"], e["inputs"], shape, dtype)
            except Exception:
                pass
done()
"""


def check(
    op: str,
    refs: dict[str, str],
    shapes: list[dict[str, Any]],
    dtypes: list[str],
    import_env: tuple[tuple[str, str], ...],
) -> str:
    """Why capturing ``op`` (its resolved ``refs``: op, inputs, reference) does not return for some shape and dtype,
    in one line; ``""`` when every capture returns (or raises: the reader reports that itself)."""
    entry = {"op": refs["op"], "inputs": refs["inputs"], "refs": sorted(refs.values()), "shapes": shapes,
             "dtypes": [str(d) for d in dtypes]}  # fmt: skip
    key = json.dumps([entry, import_env, _stamps(list(refs.values())), sys.executable, _CHILD], default=str)
    marker = _marker(key)
    if marker.is_file():
        return ""
    why = _check_cached(key, json.dumps(entry), import_env, op)
    if not why:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("ok\n")
        except OSError:
            pass  # an unwritable cache only costs the next read the probe again
    return why


@lru_cache(maxsize=64)
def _check_cached(_key: str, entry_json: str, import_env: tuple[tuple[str, str], ...], op: str) -> str:
    got = child_probe.run(_CHILD, [json.loads(entry_json)], import_env)
    if got.clean or (not got.imported and not got.timed_out):
        return ""  # an import that fails fails the same way in the reader, which names it
    where = f"capturing op {op} for shape {got.last[1]} {got.last[2]}" if got.last else f"importing op {op}"
    if got.timed_out:
        limit = timeout_s("HARNESS_CALLBACK_TIMEOUT_S" if got.imported else "HARNESS_IMPORT_TIMEOUT_S")
        return f"{where} did not return within {limit:g} s (it hangs?)"
    if got.returncode < 0:
        return f"{where} killed the process ({signal.Signals(-got.returncode).name})"
    return (
        f"{where} ended the process (exit code {got.returncode}) instead of returning: it calls sys.exit or os._exit"
        + (f" ({got.stderr_tail})" if got.stderr_tail and got.returncode else "")
    )


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
