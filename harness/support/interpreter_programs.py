"""Triton's CPU interpreter made to run some of a launch's programs, not all (``TRITON_INTERPRET=1`` only).

A kernel at a model's real shape has tens of thousands of programs; run one at a time in numpy, every config of
every kernel would take hours. The check of a config at that shape (:mod:`harness.intake.inductor.sampled_check`) runs the
programs that cover a few windows of the output (the first, the last, the middle and two drawn ones, on each grid
axis) for the config under test and for the reference config, and compares what the two wrote.

The interpreter walks a launch's grid with three nested ``for ... in range(grid[axis])`` loops in
``GridExecutor.__call__`` (triton 3.2-3.9). Inside :func:`only`, the ``range`` those loops call yields the chosen
program ids of that axis instead (those below the grid's size); every other ``range`` in the interpreter is the
builtin. Where the loops are not found (another interpreter), :func:`only` yields False and changes nothing: the
caller then runs the whole grid or says it could not.
"""

from __future__ import annotations

import builtins
import inspect
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any


def _axis_lines() -> dict[int, int] | None:
    """Line number of each grid loop in ``GridExecutor.__call__`` -> its axis, or None where they are not found."""
    try:
        import triton.runtime.interpreter as itp

        lines, start = inspect.getsourcelines(itp.GridExecutor.__call__)
    except (ImportError, AttributeError, OSError, TypeError):
        return None
    found = {}
    for offset, text in enumerate(lines):
        for axis in range(3):
            if f"in range(grid[{axis}])" in text:
                found[start + offset] = axis
    return found if sorted(found.values()) == [0, 1, 2] else None


@contextmanager
def only(programs: Sequence[Sequence[int]]) -> Iterator[bool]:
    """For the block, each launch the interpreter runs takes only the program ids ``programs[axis]`` on each axis
    (an axis not given runs whole); yields whether the interpreter could be told (else the grid runs whole)."""
    lines = _axis_lines()
    if lines is None:
        yield False
        return
    import triton.runtime.interpreter as itp

    code = itp.GridExecutor.__call__.__code__

    def chosen_range(*args: Any) -> Any:
        caller = sys._getframe(1)
        axis = lines.get(caller.f_lineno) if caller.f_code is code else None
        if axis is None or axis >= len(programs) or len(args) != 1:
            return builtins.range(*args)
        return [p for p in programs[axis] if p < args[0]]

    had = "range" in itp.__dict__
    before = itp.__dict__.get("range")
    itp.range = chosen_range  # type: ignore[attr-defined]
    try:
        yield True
    finally:
        if had:
            itp.range = before  # type: ignore[attr-defined]
        else:
            del itp.range  # type: ignore[attr-defined]
