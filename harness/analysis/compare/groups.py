"""Changes between two runs grouped by what moved, where, and what the moved configs share: "32 config(s) spill
more on mi300x (flash_attention 20, matmul 12), all with num_stages 4" instead of 32 lines.

A group is one kind of change on one target column: a resource that went up or down (registers, spills, shared
memory, occupancy, the instruction counts), or binaries that changed with the same instruction-mix signature
(which mix figures went up, which down). What the group's configs share is said only where it sets them apart:
a config value every member has and not every config of that column in the comparison has.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIN_GROUP = 2  # fewer changes than this are not a group: the full table lists them


@dataclass(frozen=True)
class Group:
    what: str  # e.g. "spill_bytes up", "binary changed: shared_loads up, barriers up"
    column: str
    count: int
    kernels: tuple[tuple[str, int], ...]  # (kernel, how many of the group), most first
    common: tuple[tuple[str, Any], ...]  # config values every member shares and that set them apart

    def line(self) -> str:
        kernels = ", ".join(f"{k} {n}" for k, n in self.kernels)
        shared = ", ".join(f"{k} {v}" for k, v in self.common)
        return f"{self.count} config(s) {self.what} on {self.column} ({kernels})" + (
            f", all with {shared}" if shared else ""
        )


@dataclass(frozen=True)
class Member:
    """One change as the grouping sees it."""

    what: str
    column: str
    kernel: str
    config: Mapping[str, Any]


def group(members: Sequence[Member], population: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[Group]:
    """Members grouped by (what, column), largest first; ``population``: column -> every matched config there."""
    by: dict[tuple[str, str], list[Member]] = defaultdict(list)
    for m in members:
        by[(m.what, m.column)].append(m)
    out = []
    for (what, column), ms in by.items():
        if len(ms) < MIN_GROUP:
            continue
        kernels = tuple(Counter(m.kernel for m in ms).most_common())
        out.append(Group(what, column, len(ms), kernels, _common(ms, population.get(column, ()))))
    return sorted(out, key=lambda g: (-g.count, g.column, g.what))


def _common(ms: Sequence[Member], everyone: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, Any], ...]:
    first = ms[0].config
    shared = {k: v for k, v in first.items() if all(m.config.get(k) == v for m in ms)}
    if len({m.kernel for m in ms}) == 1:
        shared.pop("kernel", None)
    distinctive = {k: v for k, v in shared.items() if not all(c.get(k) == v for c in everyone)}
    return tuple(sorted(distinctive.items()))
