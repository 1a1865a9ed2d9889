"""Known failures: compile or check failures a matrix expects, with the reason and the Triton releases.

A nightly that always fails on a known Triton bug teaches people to ignore it. An entry
in the matrix (``known_failures``) names the builds it covers by glob patterns on the
kernel, shape id, config id, target and compile environment, and the Triton releases
by a version specifier (``>=3.6,<3.7``). Matching builds are still compiled and
recorded, shown as expected, and do not fail the run; a matching build that passes is
reported, so the entry can be removed.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass
from typing import Any

from harness.support.checking import Checker, suggest

FIELDS = ("kernel", "shape", "config", "target", "environment")


@dataclass(frozen=True)
class KnownFailure:
    reason: str
    kernel: str = "*"
    shape: str = "*"
    config: str = "*"
    target: str = "*"
    environment: str = "*"
    triton: str = ""  # a version specifier (PEP 440); empty: every release

    def covers(self, kernel: str, shape: str, config: str, target: str, environment: str, triton: str) -> bool:
        values = dict(zip(FIELDS, (kernel, shape, config, target, environment)))
        if not all(fnmatch.fnmatchcase(values[f], getattr(self, f)) for f in FIELDS):
            return False
        return not self.triton or triton_in(self.triton, triton)


def triton_in(spec: str, version: str) -> bool:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) in SpecifierSet(spec)
    except InvalidVersion:
        return False


def specifier_problem(spec: str) -> str:
    """'' when ``spec`` is a valid version specifier, else why not."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(spec)
    except InvalidSpecifier as exc:
        return f"triton must be a version specifier like '>=3.6,<3.7': {exc}"
    return ""


def first_match(
    entries: tuple[KnownFailure, ...], kernel: str, shape: str, config: str, target: str, environment: str, triton: str
) -> KnownFailure | None:
    return next((k for k in entries if k.covers(kernel, shape, config, target, environment, triton)), None)


def parse_known_failures(chk: Checker, raw: Any) -> tuple[KnownFailure, ...]:
    """``known_failures: [{reason, kernel?, shape?, config?, target?, environment?, triton?}]`` (globs, a specifier)."""
    if not isinstance(raw, list):
        return ()
    out = []
    allowed = {"reason", "triton", *FIELDS}
    for i, entry in enumerate(raw):
        path = ("known_failures", i)
        if not isinstance(entry, dict):
            chk.add(path, "a known failure is a mapping {reason, kernel, shape, config, target, environment, triton}")
            continue
        bad = False
        for key, value in entry.items():
            if key not in allowed:
                chk.add(path + (key,), f"unknown key {key!r} in a known failure{suggest(key, allowed)}")
                bad = True
            elif not isinstance(value, str) or not value.strip():
                chk.add(path + (key,), f"known failure field {key!r} must be a non-empty string, got {value!r}")
                bad = True
        if not isinstance(entry.get("reason"), str):
            chk.add(path, "a known failure needs a 'reason' (what fails, and where it is tracked)")
            bad = True
        problem = specifier_problem(entry["triton"]) if isinstance(entry.get("triton"), str) else ""
        if problem:
            chk.add(path + ("triton",), problem)
            bad = True
        if not bad:
            out.append(KnownFailure(**{k: str(v) for k, v in entry.items()}))
    return tuple(out)


def apply_known_failures(known: Any, records: list[Any]) -> list[Any]:
    """The records again, new where the matrix expects a build's failure (``expected_failure``) or an expected
    failure now passes (``known_failure_fixed``); the records given are not changed."""
    out = []
    for r in records:
        match = (
            first_match(known, r.kernel, r.shape_id, r.config_id, r.target, r.environment, r.triton) if known else None
        )
        if match is None:
            out.append(r)
        elif r.status != "ok":
            out.append(dataclasses.replace(r, expected_failure=match.reason))
        else:
            out.append(dataclasses.replace(r, known_failure_fixed=match.reason))
    return out
