"""The harness's own environment settings that are numbers, read one way: a value that is not one is an error.

``HARNESS_IMPORT_TIMEOUT_S=nan`` once meant one second without a word (``max(1.0, nan)`` is 1.0), and so did 0 or
a negative value. The command line checks every such variable before it reads a matrix (:func:`problems`), so a
bad one is a one-line error naming the variable and exit 2; a library caller gets :class:`SettingError`.
"""

from __future__ import annotations

import math
import os

#: variable -> (default, smallest allowed, what it is)
TIMEOUTS = {
    "HARNESS_IMPORT_TIMEOUT_S": (120.0, 1.0, "seconds a user module's import may take"),
    "HARNESS_CALLBACK_TIMEOUT_S": (120.0, 1.0, "seconds one spec callback may take while the matrix is read"),
    "HARNESS_CHECK_BUDGET_S": (50.0, 0.0, "seconds the host check of one compiled graph may take"),
}
MAX_S = 86_400.0


class SettingError(ValueError):
    """An environment setting of the harness that is not a value it takes; ``str()`` says which and why."""


def timeout_s(name: str) -> float:
    """The number of seconds ``name`` sets (its default when unset)."""
    default, least, what = TIMEOUTS[name]
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and least <= value <= MAX_S):
        raise SettingError(f"{name}={raw!r}: must be a number of {what}, from {least:g} to {MAX_S:g}")
    return value


def problems() -> list[str]:
    """Every numeric setting in this environment that is wrong, one line each."""
    found = []
    for name in TIMEOUTS:
        try:
            timeout_s(name)
        except SettingError as exc:
            found.append(str(exc))
    return found
