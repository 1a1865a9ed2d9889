"""Validation plumbing for YAML read with line numbers: problems as ``file:line: message``, all collected.

Used by the matrix and by the sections that live beside their own data (compile
environments, known failures), so each section is checked where it is defined.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from harness.support import yamlpos


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class MatrixError(Exception):
    """Raised with every problem found; ``str()`` is one ``file:line: message`` per line."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def type_name(t: Any) -> str:
    names = {
        str: "a string",
        list: "a list",
        dict: "a mapping",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
    }
    if isinstance(t, tuple):
        if set(t) == {int, float}:
            return "a number"
        return " or ".join(names[x] for x in t if x is not float or int not in t)
    return names[t]


def is_a(value: Any, t: Any) -> bool:
    types = t if isinstance(t, tuple) else (t,)
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def suggest(word: str, options: Any) -> str:
    close = difflib.get_close_matches(str(word), sorted(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Checker:
    """Collects problems while walking the located YAML."""

    def __init__(self, file: str, doc: yamlpos.Located) -> None:
        self.file, self.doc = file, doc
        self.problems: list[Problem] = []

    def add(self, path: tuple[Any, ...], message: str) -> None:
        self.problems.append(Problem(self.file, self.doc.line(path), message))

    def keys(self, mapping: dict, path: tuple[Any, ...], allowed: dict, what: str) -> None:
        for key, value in mapping.items():
            if key not in allowed:
                self.add(path + (key,), f"unknown key {key!r} in {what}{suggest(key, allowed)}")
            elif not is_a(value, allowed[key]):
                self.add(
                    path + (key,),
                    f"{what} field {key!r} must be {type_name(allowed[key])}, got {type(value).__name__} {value!r}",
                )


def seen_before(seen: set[Any], value: Any) -> bool:
    """Whether ``value`` equals one already in ``seen`` (then True), else adds it: duplicates found in one pass, so a
    matrix of 100,000 shapes validates in linear time (``x in list[:i]`` was quadratic). Mappings and lists are
    keyed by their items, so equality is Python's, as ``in`` had it."""
    key = _hashable(value)
    if key in seen:
        return True
    seen.add(key)
    return False


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return ("mapping", frozenset((_hashable(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("sequence", tuple(_hashable(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("other", repr(value))
    return value
