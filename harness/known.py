"""Known failures: compile or check failures a matrix expects, with the reason and the Triton releases.

A nightly that always fails on a known Triton bug teaches people to ignore it. An entry
in the matrix (``known_failures``) names the builds it covers by glob patterns on the
kernel, shape id, config id, target and compile environment, and the Triton releases
by a version specifier (``>=3.6,<3.7``). Matching builds are still compiled and
recorded, shown as expected, and do not fail the run; a matching build that passes is
reported, so the entry can be removed.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass

FIELDS = ("kernel", "shape", "config", "target", "environment")


@dataclass(frozen=True)
class KnownFailure:
    reason: str
    kernel: str = "*"
    shape: str = "*"
    config: str = "*"
    target: str = "*"
    environment: str = "*"
    triton: str = ""          # a version specifier (PEP 440); empty: every release

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


def first_match(entries: tuple[KnownFailure, ...], kernel: str, shape: str, config: str, target: str,
                environment: str, triton: str) -> KnownFailure | None:
    return next((k for k in entries if k.covers(kernel, shape, config, target, environment, triton)), None)
