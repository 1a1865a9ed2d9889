"""What got worse since the baseline, decided once for report.html's first section: for each run of the night
(a job's run, ``static-triton36``, its shards together), ``harness compare``'s judgement against its namesake in the
baseline night — what got worse, what got better, builds new tonight, builds the baseline had that tonight lacks —
or that it has no namesake there. The renderer lists these; it decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.compare.diff import Change, Comparison

NEW = -1  # a run with no namesake in the baseline


@dataclass(frozen=True)
class UnitVerdict:
    unit: str  # the run's name in the night (its folder)
    exit_code: int  # harness compare's; NEW when the baseline has no run of that name
    worse: tuple[Change, ...] = ()
    better: tuple[Change, ...] = ()
    new: tuple[str, ...] = ()  # builds only tonight has
    missing: tuple[str, ...] = ()  # builds the baseline had and tonight lacks (missing in new first)
    reason: str = ""  # why the two cannot be compared, when they cannot


@dataclass(frozen=True)
class NightVerdict:
    against: str  # what the night was judged against ("night 123"), as the caller names it
    units: tuple[UnitVerdict, ...]

    @property
    def exit_code(self) -> int:
        return max((u.exit_code for u in self.units), default=0)

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """Changes worse, better; builds new, missing, over every run."""
        return (
            sum(len(u.worse) for u in self.units),
            sum(len(u.better) for u in self.units),
            sum(len(u.new) for u in self.units),
            sum(len(u.missing) for u in self.units),
        )


def unit_verdict(unit: str, cmp: Comparison | None, reason: str = "") -> UnitVerdict:
    """One run against its namesake; ``cmp`` None: no namesake (``reason`` empty) or unreadable (``reason``)."""
    if cmp is None:
        return UnitVerdict(unit, 3 if reason else NEW, reason=reason)
    return UnitVerdict(
        unit,
        cmp.exit_code,
        worse=tuple(c for c in cmp.changes if c.worse),
        better=tuple(c for c in cmp.changes if c.better),
        new=tuple(cmp.only_new),
        missing=(*cmp.missing_in_new, *cmp.only_base),
        reason=cmp.reason,
    )
