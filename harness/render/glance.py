"""The answer first, in words: the per-kernel verdict counts and the worst findings as the terminal and report.md
say them. report.html draws the same two from the same place (:attr:`Findings.overview`), so the three outputs
give the same worst findings in the same order, each with its whole reason (wrapped where a width applies, never
cut)."""

from __future__ import annotations

from harness.analysis.findings import Findings
from harness.analysis.overview import Worst
from harness.render.escaping import md, plain
from harness.render.text_table import table

#: a verdict as a count says it: ``3 fit, 1 spill, 2 exceed``
COUNTED = {"fits": "fit", "spills": "spill", "exceeds": "exceed"}


def counted(verdict: str, n: int) -> str:
    return f"{n} {COUNTED.get(verdict, verdict)}"


def _count_words(counts: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(counted(v, n) for v, n in counts)


def worst_text(w: Worst) -> str:
    """``NVIDIA only: matmul fp16 M1024xN1024xK1024 M128_N128_K64_s3_w8 — mi300x: shared 98304 > 65536``"""
    return f"{w.category}: {w.kernel} {w.label}" + (f" — {w.reason}" if w.reason else "")


def wrapped(text: str, width: int, indent: str = "    ") -> list[str]:
    """``text`` on lines of at most ``width`` columns, broken at spaces (a word longer than a line stands alone),
    continuation lines starting with ``indent`` (which the first line's width does not include): wrapped, never
    cut."""
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= width or not current.strip():
            current = candidate
        else:
            lines.append(current)
            current = indent + word
    lines.append(current)
    return lines


def wrap_parts(line: str, width: int) -> list[str]:
    """A line broken at its `` · `` separators to ``width`` (a part still too wide also at its ``, ``),
    continuations indented under the line's own indent: wrapped, never cut."""
    lead = line[: len(line) - len(line.lstrip())]
    pieces: list[str] = []
    for part in line.strip().split(" · "):
        pieces += [part] if len(lead) + 4 + len(part) <= width else part.replace(", ", ",\0").split("\0")
    out = [lead]
    for piece in pieces:
        sep = "" if not out[-1].strip() else (" · " if not out[-1].endswith(",") else " ")
        joined = out[-1] + sep + piece.strip()
        if len(joined) <= width or not out[-1].strip():
            out[-1] = joined
        else:
            out.append(lead + "    " + piece.strip())
    return out


def worst_terminal(found: Findings, width: int, indent: str = "  ") -> list[str]:
    """The worst findings for a terminal: numbered as report.html numbers them, each wrapped to ``width``."""
    out: list[str] = []
    for i, w in enumerate(found.overview.worst, 1):
        head = f"{indent}{i}. "
        lines = wrapped(plain(worst_text(w)), width - len(head), " " * len(head))
        out += [head + lines[0], *lines[1:]]
    return out


def markdown(found: Findings) -> list[str]:
    """report.md's first section: configs per kernel and target column by verdict, then the worst findings."""
    ov = found.overview
    if not ov.kernels:
        return []
    body = []
    for kernel in ov.kernels:
        cells = [ov.cell(kernel, column) for column in ov.columns]
        body.append([kernel] + [_count_words(c.counts) if c is not None else "" for c in cells])
    out = [
        "## At a glance",
        "",
        "Configs per kernel and target column, by verdict under Triton's defaults (at risk: fits by default, not "
        "under a swept compile environment; a config built into another config's binary counts once):",
        "",
        table(body, ["kernel", *ov.columns], "github"),
        "",
    ]
    if ov.worst:
        out += [
            "Worst findings (failed, then one vendor only, then exceeding everywhere; the reason that decided):",
            "",
        ]
        out += [f"{i}. {md(worst_text(w))}" for i, w in enumerate(ov.worst, 1)] + [""]
    return out
