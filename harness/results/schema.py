"""What a stored run must look like before any report, gate or history reads it.

A damaged or hand-edited ``results.json`` (``"run": []``, an ``error`` that is a number, ``baselines``
a list, ``status: "weird"``, ``fits: "yes"``) is refused naming the field, whatever its type, instead
of failing somewhere inside a renderer. The record's own fields are checked against the
annotations of the record class the caller passes (:class:`~harness.model.records.Record`), so a field added there
is checked here without a second list to keep, and this module imports nothing of the harness; the nested
payloads (``resources``, ``runtime`` with its timings and baselines, ``correctness``) against their own classes'
annotations, found through the record class's, and the ``run`` object against the run class the caller passes
(:class:`~harness.model.run_info.RunInfo`).
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from functools import lru_cache
from typing import Any

NUMBER = (int, float)
#: a record's status, and the mode that made it
STATUSES = frozenset({"ok", "mismatch", "error", "crash", "timeout", "interpret-unsupported"})
MODES = frozenset({"compile", "interpret", "tune"})


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _allowed(annotation: str) -> tuple[type, ...]:
    """The Python types a field's annotation admits in JSON (``float`` also takes an integer)."""
    kinds: list[type] = []
    outer = re.sub(r"\[.*\]", "", annotation)  # Mapping[str, bool | str] | None: the outer union only
    for part in (p.strip() for p in outer.split("|")):
        base = part.split("[")[0]
        admitted: dict[str, list[type]] = {
            "str": [str],
            "bool": [bool],
            "int": [int],
            "float": [int, float],
            "dict": [dict],
            "list": [list],
            "None": [type(None)],
            "tuple": [list],
            "Mapping": [dict],
            "Mode": [str],  # harness.model.vocabulary's Literals: strings, their values checked against MODES
            "Status": [str],  # and STATUSES (record_problem)
        }
        # a payload dataclass (Resources, ...) is a JSON object: its own fields are checked by _payload_problem
        kinds += admitted.get(base, [dict] if base[:1].isupper() and base != "Any" else [object])
    return tuple(kinds)


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in kinds:
        return False  # true is not a number of seconds
    if isinstance(value, float) and not math.isfinite(value) and float in kinds:
        return True  # NaN timings are judged where they are read (compare says which)
    return isinstance(value, kinds)


def _fields_problem(data: dict[str, Any], types: dict[str, tuple[type, ...]], where: str) -> str:
    for name, kinds in types.items():
        if name in data and not _is(data[name], kinds):
            wanted = " or ".join(sorted({"null" if k is type(None) else k.__name__ for k in kinds}))
            return f"field {where}{name!r} must be {wanted}, got {_type_name(data[name])}"
    return ""


@lru_cache(maxsize=8)
def _record_types(record_class: type) -> dict[str, tuple[type, ...]]:
    return {f.name: _allowed(str(f.type)) for f in dataclasses.fields(record_class)}


@lru_cache(maxsize=4)
def _payloads(record_class: type) -> dict[str, type]:
    """The record's fields whose type is a payload dataclass (it reads itself with ``from_json``)."""
    found = {}
    for name, hint in typing.get_type_hints(record_class).items():
        inner = [a for a in typing.get_args(hint) if a is not type(None)] if typing.get_origin(hint) else [hint]
        kind = inner[0] if len(inner) == 1 else None  # Runtime | None: the payload class
        if isinstance(kind, type) and dataclasses.is_dataclass(kind) and hasattr(kind, "from_json"):
            found[name] = kind
    return found


def _object_problem(data: dict[str, Any], payload: Any, where: str) -> str:
    """Why one payload's JSON object is not what its class's annotations say, its nested payloads included."""
    types = {k: v for k, v in _record_types(payload).items() if k not in ("extra", "given")}
    problem = _fields_problem(data, types, where)
    if problem:
        return problem
    for name, (kind, sub) in payload.nested().items():
        value = data.get(name)
        if kind == "one" and isinstance(value, dict):
            items: list[tuple[str, Any]] = [("", value)]
        elif kind == "map" and isinstance(value, dict):
            items = [(f"[{str(k)[:40]!r}]", v) for k, v in value.items()]
        elif kind in ("seq", "list") and isinstance(value, list):
            items = [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            continue
        for label, item in items:
            if not isinstance(item, dict):
                return f"field {where}{name}{label} must be an object, got {_type_name(item)}"
            problem = _object_problem(item, sub, f"{where}{name}{label}.")
            if problem:
                return problem[:200]
    return ""


def _payload_problem(data: dict[str, Any], record_class: type) -> str:
    for name, kind in _payloads(record_class).items():
        value = data.get(name)
        if isinstance(value, dict):
            problem = _object_problem(value, kind, f"{name}.")
            if problem:
                return problem
    return ""


def record_problem(data: dict[str, Any], record_class: type) -> str:
    """Why a stored record cannot be read as an instance of ``record_class`` ('' when it can)."""
    types = _record_types(record_class)
    for name in ("kernel", "dtype", "target", "arch", "vendor", "triton", "config_id", "origin", "mode", "status"):
        if not isinstance(data.get(name), str):
            return f"field {name!r} must be a string, got {_type_name(data.get(name))}"
    problem = _fields_problem(data, types, "") or _payload_problem(data, record_class)
    if problem:
        return problem
    if data["status"] not in STATUSES:
        return f"field 'status' must be one of {', '.join(sorted(STATUSES))}, got {data['status'][:40]!r}"
    if data["mode"] not in MODES:
        return f"field 'mode' must be one of {', '.join(sorted(MODES))}, got {data['mode'][:40]!r}"
    for flag in data.get("flags", []):
        if (
            not isinstance(flag, dict)
            or not isinstance(flag.get("resource"), str)
            or not all(
                isinstance(flag.get(k), NUMBER) and not isinstance(flag.get(k), bool) for k in ("value", "limit")
            )
            or flag.get("severity") not in ("error", "warn")
        ):
            return f"a flag must be {{resource, value, limit, severity}}, got {flag!r}"[:200]
    for kind, artifact in (data.get("artifacts") or {}).items():
        if not isinstance(artifact, dict) or not all(isinstance(v, str) for v in artifact.values()):
            return f"field artifacts[{str(kind)[:20]!r}] must be an object of strings"
    return ""


def run_problem(run: Any, run_class: type) -> str:
    """Why a stored run's ``run`` object cannot be read as an instance of ``run_class`` ('' when it can)."""
    if not isinstance(run, dict):
        return f"field 'run' must be an object, got {_type_name(run)}"
    return _object_problem(run, run_class, "run.")
