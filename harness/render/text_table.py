"""A table whose cells are escaped for its format: markdown for ``github`` (report.md), one plain line per cell
otherwise (the terminal's ``--wide`` tables). tabulate draws it."""

from __future__ import annotations

import re
from typing import Any

from tabulate import tabulate

from harness.render.escaping import md, plain


def table(body: list[list[Any]], headers: list[str], fmt: str) -> str:
    """A table whose cells are escaped for its format (markdown for ``github``, one line each otherwise)."""
    clean = md if fmt == "github" else plain
    return tabulate(
        [[clean(c) for c in row] for row in body],
        headers=[clean(h) for h in headers],
        tablefmt=fmt,
        disable_numparse=True,
    )


def natural(text: str) -> tuple[Any, ...]:
    """A sort key that orders the numbers inside ids by value: K32 < K64 < K128, s3_w4 < s3_w16."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text))
