"""A spec's own callbacks are called in a child process first, so a hang, a crash or an exit is one error line.

``config_ok``, ``fixed_constexprs`` and ``grid`` are the user's code, and the matrix check, the case
expansion and the launch-specialisation check call them in the harness's own process. Before they do, one child per matrix (per
``import_env``) imports the user's specs and calls each callback for every shape, dtype, target and config the
matrix gives; the child says which call it is making before it makes it. A call that does not return within
``HARNESS_CALLBACK_TIMEOUT_S`` (after the imports, which have their own limit), that kills the child or that
ends it (``sys.exit``, ``os._exit``) is reported naming the callback and its arguments. A callback that raises
is left to the checks that call it (they say what it raised, in the matrix or in the build's record).
``runtime_args`` is not probed: only compile workers call it, each with the case's timeout, so one that
misbehaves costs its own case a ``crash`` / ``timeout`` record and nothing else. The harness's own kernels
are trusted and not probed; a verdict is cached per source hash and arguments.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.matrix import child_probe, loader

_CHILD = r"""
from harness.matrix import loader
from harness.model import targets
from harness.authoring.spec import _with_context
specs = [loader.load(e["ref"]) for e in ENTRIES]
imported()
for i, (entry, spec) in enumerate(zip(ENTRIES, specs)):
    for shape in entry["shapes"]:
        for config in entry["configs"]:
            say(i, "config_ok", shape, config)
            try:
                ok = spec.config_ok(dict(shape), dict(config))
            except Exception:
                continue
            if not ok:
                continue
            if spec.grid is not None:
                say(i, "grid", shape, config)
                try:
                    spec.grid(dict(shape), dict(config))
                except Exception:
                    pass
            for dtype in entry["dtypes"]:
                for name in entry["targets"]:
                    say(i, "fixed_constexprs", shape, config, dtype, name)
                    try:
                        _with_context(spec.fixed_constexprs, dict(shape), dtype, targets.get(name), dict(config))
                    except Exception:
                        pass
done()
"""


@dataclass(frozen=True)
class Probe:
    """One spec entry's callbacks to call: the matrix's shapes, configs, dtypes and targets for it."""

    name: str
    ref: str
    shapes: tuple[str, ...]  # each a JSON object (hashable, as the cache key needs)
    configs: tuple[str, ...]
    dtypes: tuple[str, ...]
    targets: tuple[str, ...]


def callback_timeout_s() -> float:
    from harness.support.settings import timeout_s

    return timeout_s("HARNESS_CALLBACK_TIMEOUT_S")


def check(probes: list[Probe], import_env: tuple[tuple[str, str], ...] = ()) -> tuple[str, str]:
    """``(entry name, why)`` for the first callback that hangs, crashes or exits; ``("", "")`` when all return."""
    user = [p for p in probes if _is_user_code(p.ref)]
    if not user:
        return "", ""
    stamps = tuple(loader.source_hash(p.ref) for p in user)
    marker = _passed_marker(tuple(user), stamps, import_env)
    if marker.is_file():
        return "", ""  # these very sources returned from every call before (a verdict kept per source hash)
    found = _check_cached(tuple(user), stamps, import_env)
    if not found[1]:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("ok\n")
        except OSError:
            pass  # an unwritable cache only costs the next read of this matrix the check again
    return found


def _passed_marker(probes: tuple[Probe, ...], stamps: tuple[str, ...], import_env: tuple[tuple[str, str], ...]) -> Path:
    from harness.support.cache import cache_dir

    key = hashlib.sha256(
        json.dumps([[dataclasses.astuple(p) for p in probes], stamps, import_env, sys.executable, _CHILD]).encode()
    ).hexdigest()[:32]
    return cache_dir() / "callback-probe" / key


def _is_user_code(ref: str) -> bool:
    from harness.matrix import ops

    if ops.is_op(ref):
        return False  # the harness's own callbacks over what the op passed
    location = ref.rpartition(":")[0]
    return not (location.endswith(".py") and os.path.dirname(os.path.abspath(location)) == str(loader.REPO_KERNELS))


@lru_cache(maxsize=64)
def _check_cached(
    probes: tuple[Probe, ...], stamps: tuple[str, ...], import_env: tuple[tuple[str, str], ...]
) -> tuple[str, str]:
    entries = [
        {
            "ref": p.ref,
            "shapes": [json.loads(s) for s in p.shapes],
            "configs": [json.loads(c) for c in p.configs],
            "dtypes": list(p.dtypes),
            "targets": list(p.targets),
        }
        for p in probes
    ]
    got = child_probe.run(_CHILD, entries, import_env)
    if got.clean:
        return "", ""
    if got.timed_out:
        if not got.imported:
            return probes[0].name, f"importing its module did not finish within {loader.import_timeout_s():g} s"
        return _name(
            probes, got.last
        ), f"{_call(got.last)} did not return within {callback_timeout_s():g} s (it hangs?)"
    if not got.imported:  # the import probe passed: an import that fails now fails the same way in the check itself
        return "", ""
    if got.returncode < 0:
        return _name(probes, got.last), f"{_call(got.last)} killed the process ({signal.Signals(-got.returncode).name})"
    return _name(probes, got.last), (
        f"{_call(got.last)} ended the process (exit code {got.returncode}) instead of returning: it calls sys.exit "
        "or os._exit" + (f" ({got.stderr_tail})" if got.stderr_tail and got.returncode else "")
    )


def _name(probes: tuple[Probe, ...], last: list[Any] | None) -> str:
    return probes[int(last[0])].name if last else probes[0].name


def _call(last: list[Any] | None) -> str:
    if not last:
        return "a callback"
    _, callback, shape, config, *rest = last
    more = f", dtype {rest[0]}, target {rest[1]}" if rest else ""
    return f"{callback} (shape {shape}, config {config}{more})"
