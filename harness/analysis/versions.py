"""The comparison between Triton versions that one merge holds (static runs of two pins, say): the
records of each version against the next one's, through ``harness compare``'s own rules."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from harness.analysis.compare.diff import Comparison, compare_runs
from harness.analysis.compare.inputs import CompareInputError
from harness.model.records import Record


def _order(version: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def versions(records: list[Record]) -> list[str]:
    return sorted({r.triton for r in records if r.mode == "compile"}, key=_order)


def between_versions(records: list[Record]) -> list[tuple[str, str, Comparison]]:
    """(older, newer, comparison) for each consecutive pair of the Triton versions in the records."""
    held = versions(records)
    out = []
    for older, newer in zip(held, held[1:]):
        base = [r for r in records if r.triton == older]
        new = [r for r in records if r.triton == newer]
        try:
            cmp = compare_runs(base, new)
        except CompareInputError as exc:
            cmp = Comparison(matched=0, reason=str(exc))
        out.append((older, newer, cmp))
    return out
