"""The unified diff of a changed binary's intermediate representation and assembly, base against new: what an
engineer opens to see *how* a Triton bump changed a kernel (``harness compare --diffs DIR``).

For every matched build whose binary changed, the TTGIR (where the layout, pipelining and async-copy decisions
show) and the PTX or AMDGCN of both runs, read from each run's own artifact files. One file per build and kind,
named from the build's label (:func:`diff_name`) so that compare's markdown links them without knowing more.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.model.records import Record

KINDS = ("ttgir", "ptx", "amdgcn")
LIMIT = 1000  # builds diffed at most (a Triton bump changes nearly every binary: the first ones by label)


@dataclass(frozen=True)
class IRDiff:
    label: str
    kind: str
    text: str  # the unified diff ("" when the files are equal)


def diff_name(label: str, kind: str) -> str:
    """The file a build's diff of ``kind`` is written to (a name safe on every file system)."""
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", label).strip("_") + f".{kind}.diff"


def _read(record: Record, kind: str, roots: Sequence[Path]) -> list[str] | None:
    art = record.artifacts.get(kind)
    if art is None or not art.path:
        return None
    for root in roots:  # a run directory, or a night's shard directories
        path = root / art.path
        if path.is_file():
            return path.read_text(errors="replace").splitlines(keepends=True)
    return None


def diffs(
    pairs: Sequence[tuple[str, Record, Record]], base_roots: Sequence[Path], new_roots: Sequence[Path]
) -> list[IRDiff]:
    """``pairs``: (label, base record, new record) of builds whose binary changed."""
    out = []
    for label, ra, rb in list(pairs)[:LIMIT]:
        for kind in KINDS:
            a, b = _read(ra, kind, base_roots), _read(rb, kind, new_roots)
            if a is None or b is None:
                continue
            text = "".join(difflib.unified_diff(a, b, f"base/{kind}", f"new/{kind}", n=3))
            out.append(IRDiff(label, kind, text))
    return out
