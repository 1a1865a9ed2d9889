"""What a CI job gates a pull request on: the run's findings counted by kind, and which kinds it was told to fail on.

A finding is not a failure (a config that exceeds MI300X's LDS is information, and `harness run` exits 0 for it),
but a team that wants "every config fits every target" must be able to say so without parsing results.json:
``harness run --fail-on one-vendor,exceeds`` exits :data:`harness.cli.common.EXIT_FINDINGS` when any config of
those kinds is in the run. Counted per config row (one kernel, dtype, shape, config and Triton version across the
run's targets), as report.html's first screen counts: a config built into another config's binary counts once.

The kinds are one table, :data:`TABLE`: its order is the order every surface names them in, its words are
``--fail-on``'s help, and each kind's test of a row is here and nowhere else. A new kind is a row of that table
(and, where it needs a verdict of its own, :mod:`harness.analysis.verdicts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.analysis.rows import Row


def _any_verdict(verdict: str) -> Callable[[Row], bool]:
    return lambda row: any(tv.verdict == verdict for tv in row.judged.targets.values())


#: the interpreter's word on a row that is not a failure of the config (``interpret-unsupported``: the interpreter's
#: limitation, said with its reason)
NOT_FAILED = ("pass", "-", "not checked", "interpret-unsupported")
#: why a config that no record checked went unchecked
NONE_ASKED = (
    "no check was made: the matrix says interpret: false, the run was --static-only, or the kernel's interpreter "
    "dtypes leave this one out; a GPU host checks it on the device"
)


def _failed(row: Row) -> bool:
    return _any_verdict("failed")(row) or row.check not in NOT_FAILED


def _not_checked(row: Row) -> bool:
    """No check established the config's results (the interpreter could not run it, none was asked, or it has
    none for the config's dtype) and no GPU checked it; a failed config is counted as failed only."""
    if _failed(row) or row.check == "pass":
        return False
    return not any(r.runtime is not None and r.runtime.status in ("ok", "mismatch") for r in row.cells.values())


@dataclass(frozen=True)
class Kind:
    """A finding kind: its name (as ``--fail-on`` takes it), what it means in a line, and which rows have it;
    ``verdict``: the target verdict it is, for the kinds that are one (the targets a row shows it on)."""

    name: str
    means: str
    has: Callable[[Row], bool]
    verdict: str = ""


def _verdict_kind(name: str, means: str, verdict: str) -> Kind:
    return Kind(name, means, _any_verdict(verdict), verdict)


TABLE: tuple[Kind, ...] = (
    Kind(
        "failed",
        "a build or check under Triton's defaults failed on some target, or a check did not match its reference",
        _failed,
        "failed",  # the targets whose build failed are named; a failed check is the config's, on no one target
    ),
    _verdict_kind("exceeds", "the config exceeds a limit of some target under Triton's defaults", "exceeds"),
    Kind("one-vendor", "it fits one vendor's targets and not the other's", lambda row: row.judged.asymmetric),
    _verdict_kind(
        "at-risk", "it fits under Triton's defaults but not under a swept compile environment on some target", "at risk"
    ),
    _verdict_kind("spills", "it fits, but spills registers to memory on some target", "spills"),
    _verdict_kind("incomplete", "some target has no build under Triton's defaults (an interrupted run)", "incomplete"),
    Kind(
        "not-checked",
        "no check (the interpreter's against the reference, or the GPU's) established its results",
        _not_checked,
    ),
)
KINDS = tuple(k.name for k in TABLE)


@dataclass(frozen=True)
class FindingCounts:
    """Configs of a run by finding kind (a config may count under several kinds), and the configs in all."""

    configs: int
    by_kind: Mapping[str, int] = field(default_factory=dict)

    def of(self, kind: str) -> int:
        return int(self.by_kind.get(kind, 0))


def parse_kinds(text: str) -> tuple[str, ...]:
    """``--fail-on`` as given (comma-separated kinds, or ``any``); ValueError naming what is not a kind."""
    named = tuple(k.strip() for k in text.split(",") if k.strip())
    if named == ("any",):
        return KINDS
    unknown = [k for k in named if k not in KINDS]
    if unknown or not named:
        raise ValueError(
            f"--fail-on: {', '.join(repr(k) for k in unknown) or 'nothing'} is not a finding kind "
            f"(kinds: {', '.join(KINDS)}, or any)"
        )
    return tuple(dict.fromkeys(named))


def help_text() -> str:
    """``--fail-on``'s kinds, from the table (each with what it means)."""
    return "; ".join(f"{k.name}: {k.means}" for k in TABLE)


def count(rows: Sequence[Row]) -> FindingCounts:
    """Each config row once (rows wholly another config's binary are that config), by the kinds it shows."""
    counted = [row for row in rows if not row.judged.duplicate]
    return FindingCounts(configs=len(counted), by_kind={k.name: sum(1 for row in counted if k.has(row)) for k in TABLE})


def why_unchecked(row: Row) -> str:
    """Why a ``not-checked`` row went unchecked, in the words of the record that says so."""
    if row.interpret is not None:
        return row.interpret.error or row.interpret.status
    made = [r.correctness for r in row.cells.values() if r.correctness is not None]
    reasons = dict.fromkeys(c.reason or c.error or "no reason was recorded" for m in made for c in m.unchecked)
    return "; ".join(reasons) or NONE_ASKED


def unchecked(rows: Sequence[Row]) -> tuple[tuple[str, int], ...]:
    """The reasons configs were counted ``not-checked`` with how many each, most first."""
    said: dict[str, int] = {}
    for row in rows:
        if not row.judged.duplicate and _not_checked(row):
            why = why_unchecked(row)
            said[why] = said.get(why, 0) + 1
    return tuple(sorted(said.items(), key=lambda kv: -kv[1]))


def said(counts: FindingCounts) -> str:
    """The kinds a count has, in :data:`KINDS` order (``2 exceeds, 1 spills``), or ``no findings``: the one wording
    of a count on every surface (the run's last line, a compiled entry's line)."""
    return ", ".join(f"{counts.of(k)} {k}" for k in KINDS if counts.of(k)) or "no findings"


def tripped(counts: FindingCounts, kinds: Sequence[str]) -> tuple[str, ...]:
    """The kinds of ``kinds`` the run has at least one config of."""
    return tuple(k for k in kinds if counts.of(k))
