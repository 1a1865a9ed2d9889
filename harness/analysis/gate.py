"""What a CI job gates a pull request on: the run's findings counted by kind, and which kinds it was told to fail on.

A finding is not a failure (a config that exceeds MI300X's LDS is information, and `harness run` exits 0 for it),
but a team that wants "every config fits every target" must be able to say so without parsing results.json:
``harness run --fail-on one-vendor,exceeds`` exits :data:`harness.cli.common.EXIT_FINDINGS` when any config of
those kinds is in the run. Counted per config row (one kernel, dtype, shape, config and Triton version across the
run's targets), as report.html's first screen counts: a config built into another config's binary counts once.

Kinds (:data:`KINDS`):

- ``failed``: a build or check under Triton's defaults failed on some target, or the interpreter's check of the
  config did not match its reference (a kernel Inductor generated: in its graph, against eager);
- ``exceeds``: the config exceeds a limit of some target under Triton's defaults;
- ``one-vendor``: it fits one vendor's targets and not the other's (report.md's ⚠ rows);
- ``at-risk``: it fits under Triton's defaults but not under a swept compile environment on some target;
- ``spills``: it fits, but its build under Triton's defaults spills registers to memory on some target (any spill
  byte, the threshold :mod:`harness.compiling.limits` flags at);
- ``incomplete``: some target has no build under Triton's defaults (an interrupted or partial run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.rows import Row

KINDS = ("failed", "exceeds", "one-vendor", "at-risk", "spills", "incomplete")


@dataclass(frozen=True)
class FindingCounts:
    """Configs of a run by finding kind (a config may count under several kinds), and the configs in all."""

    configs: int
    failed: int
    exceeds: int
    one_vendor: int
    at_risk: int
    incomplete: int
    spills: int = 0

    def of(self, kind: str) -> int:
        return int(getattr(self, kind.replace("-", "_")))


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


def count(rows: Sequence[Row]) -> FindingCounts:
    """Each config row once (rows wholly another config's binary are that config), by the kinds it shows."""
    counted = [row for row in rows if not row.judged.duplicate]

    def having(verdict: str) -> int:
        return sum(1 for row in counted if any(tv.verdict == verdict for tv in row.judged.targets.values()))

    return FindingCounts(
        configs=len(counted),
        failed=sum(
            1
            for row in counted
            if any(tv.verdict == "failed" for tv in row.judged.targets.values())
            or row.check not in ("pass", "-", "not checked")
        ),
        exceeds=having("exceeds"),
        one_vendor=sum(1 for row in counted if row.judged.asymmetric),
        at_risk=having("at risk"),
        incomplete=having("incomplete"),
        spills=having("spills"),
    )


def said(counts: FindingCounts) -> str:
    """The kinds a count has, in :data:`KINDS` order (``2 exceeds, 1 spills``), or ``no findings``: the one wording
    of a count on every surface (the run's last line, a compiled entry's line)."""
    return ", ".join(f"{counts.of(k)} {k}" for k in KINDS if counts.of(k)) or "no findings"


def tripped(counts: FindingCounts, kinds: Sequence[str]) -> tuple[str, ...]:
    """The kinds of ``kinds`` the run has at least one config of."""
    return tuple(k for k in kinds if counts.of(k))
