"""Text from matrices, kernels and compilers made inert for where it is shown: one terminal line, a markdown
cell. Shared by every renderer (reports, compare), so it depends on nothing of the harness."""

from __future__ import annotations

import html
import re
from typing import Any

#: C0 controls but tab and newline, DEL, the C1 controls (U+009B is a one-character CSI on many terminals), and the
#: bidirectional embeddings, overrides, isolates and marks (U+202E shows a name reversed, U+2066-U+2069 reorder
#: what follows: text that displays as something other than what it is)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def no_controls(text: str) -> str:
    """The text with every control character dropped (a newline made a space): spacing kept, for aligned lines."""
    return CONTROL.sub("", text.replace("\n", " ").replace("\t", " "))


def plain(text: Any) -> str:
    """A string from a matrix or kernel on one terminal line: control characters dropped, whitespace collapsed."""
    text = str(text).encode("utf-8", "replace").decode("utf-8")  # lone surrogates from YAML escapes
    return " ".join(CONTROL.sub("", text).split())


def md(text: Any) -> str:
    """A string from a matrix or kernel, inert in markdown: it cannot end a table cell, open code, a tag, a link,
    a heading or a block quote, or break the line."""
    out = plain(text).replace("\\", "\\\\")
    for ch in "|`*[]#":
        out = out.replace(ch, "\\" + ch)
    out = out.replace("<", "&lt;")  # no tag can open; a ">" inside a line is text ("shared 98304 > 65536")
    return "\\" + out if out.startswith(">") else out  # a leading one would open a block quote


def html_text(value: Any) -> str:
    """Escaped for HTML (attributes too), control characters dropped: a page's text copied to a terminal stays
    inert."""
    return html.escape(CONTROL.sub("", str(value)), quote=True)
