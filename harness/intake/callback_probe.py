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

from harness.intake import child_probe, facts, loader

_CHILD = r"""
from harness.intake import loader
from harness.model import targets
from harness.authoring.spec import _with_context
from harness.authoring.decorated import prune
specs = [loader.load(e["ref"]) for e in ENTRIES]
imported()
answers = 0
def answer(*what):
    global answers
    result(answers, list(what))
    answers += 1
for i, (entry, spec) in enumerate(zip(ENTRIES, specs)):
    early = spec.decorations is not None and "early_config_prune" in spec.decorations.prune
    for shape in entry["shapes"]:
        passing = []
        for config in entry["configs"]:
            say(i, "config_ok", shape, config)
            try:
                ok = bool(spec.config_ok(dict(shape), dict(config)))
            except Exception as exc:
                answer(i, "config_ok", shape, config, f"{type(exc).__name__}: {exc}")
                continue
            answer(i, "config_ok", shape, config, ok)
            if not ok:
                continue
            passing.append(config)
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
        if early:
            for dtype in entry["dtypes"]:
                say(i, "early_config_prune", shape, {}, dtype, "")
                kept, _ = prune(spec.decorated, [dict(c) for c in passing], spec.stand_in_nargs(dict(shape), dtype))
                answer(i, "pruned", shape, dtype, [dict(c) for c in kept])
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
    stamps = tuple(facts.get(p.ref, import_env).source_hash for p in user)
    marker = _passed_marker(tuple(user), stamps, import_env)
    if marker.is_file():  # these very sources returned from every call before: their answers kept with the verdict
        try:
            _remember(user, json.loads(marker.read_text()))
            return "", ""
        except (OSError, ValueError, TypeError, KeyError, IndexError):
            pass  # a damaged marker: ask the child again
    found, answers = _check_cached(tuple(user), stamps, import_env)
    _remember(user, answers)
    if not found[1]:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(json.dumps(answers))
        except OSError:
            pass  # an unwritable cache only costs the next read of this matrix the check again
    return found


def _remember(probes: list[Probe], answers: Any) -> None:
    """The child's answers, checked for their shape, kept where the reader looks them up (:mod:`facts`)."""
    for i, kind, shape, key, value in answers:
        ref = probes[int(i)].ref
        if kind == "config_ok" and isinstance(value, (bool, str)) and isinstance(shape, dict):
            facts.remember_config_ok(ref, shape, key, value)
        elif kind == "pruned" and isinstance(value, list) and all(isinstance(c, dict) for c in value):
            facts.remember_pruned(ref, shape, str(key), value)
        else:
            raise ValueError(f"the callback probe reported {kind!r}, which it never says")


def _passed_marker(probes: tuple[Probe, ...], stamps: tuple[str, ...], import_env: tuple[tuple[str, str], ...]) -> Path:
    from harness.support.cache import cache_dir

    key = hashlib.sha256(
        json.dumps([[dataclasses.astuple(p) for p in probes], stamps, import_env, sys.executable, _CHILD]).encode()
    ).hexdigest()[:32]
    return cache_dir() / "callback-probe" / key


def _is_user_code(ref: str) -> bool:
    """Everything but the repository's own kernels: a captured op's spec runs the library's capture too."""
    location = ref.rpartition(":")[0]
    return not (location.endswith(".py") and os.path.dirname(os.path.abspath(location)) == str(loader.REPO_KERNELS))


@lru_cache(maxsize=64)
def _check_cached(
    probes: tuple[Probe, ...], stamps: tuple[str, ...], import_env: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], list[Any]]:
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
    answers = [got.results[k] for k in sorted(got.results)]
    return _verdict(probes, got), answers


def _verdict(probes: tuple[Probe, ...], got: child_probe.Outcome) -> tuple[str, str]:
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
