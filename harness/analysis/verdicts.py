"""Verdicts: does a config launch on a target, and on which of each vendor's targets.

Semantics (docs/usage.md, "Verdicts"):

- Per target, ``fits`` / ``exceeds`` / ``failed`` is decided by the build under
  Triton's defaults (the environment named ``default``; a matrix that sweeps
  only its own environments for a target decides by the first one it lists:
  each record names it, ``Record.deciding_environment``).
- A target whose deciding build is not among the records (a run cut mid-case, a
  ``-k`` that selected only an opt-in environment's builds) is ``incomplete``:
  an opt-in environment never decides in its place, and an incomplete target
  counts neither as fitting nor as not fitting its vendor.
- A deciding build that fits but spills registers to memory (any spill byte: the ``spills`` flag of
  :mod:`harness.compiling.limits`) is ``spills``: it launches, and pays for it in memory traffic; never a plain fit.
- Other swept environments (opt-in codegen knobs such as async copy) can only
  add ``at risk`` to a config that fits: it launches as built by default, but
  not under that knob. Their outcomes, a compile error included, are reported
  beside the deciding verdict, never instead of it.
- Per vendor: the config fits ``all``, ``some`` (which) or ``none`` of the
  vendor's targets in the row; the row's text says so, and is marked
  asymmetric when the vendors differ.

Pure functions of records: the results writer stores them in ``results.json``
(:mod:`harness.analysis.stored_verdicts`) and the report renders them; nobody re-derives them differently.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Final, Iterable

from harness.model.environments import DEFAULT
from harness.model.ids import config_key
from harness.model.records import Record
from harness.model.vocabulary import Verdict

VENDOR_LABEL = {"nvidia": "NVIDIA", "amd": "AMD"}
FITTING = ("fits", "spills", "at risk")
INCOMPLETE: Final[Verdict] = "incomplete"
#: every target verdict, best first (compare ranks by it; ``incomplete`` is never ranked: it is not compared)
VERDICTS = ("fits", "spills", "at risk", "exceeds", "failed", INCOMPLETE)


@dataclass(frozen=True)
class TargetVerdict:
    target: str
    vendor: str
    verdict: Verdict
    decided_by: Record | None  # the deciding environment's build; None when it is missing (incomplete)
    reasons: tuple[str, ...] = ()  # why it exceeds / failed / is at risk
    beside: tuple[str, ...] = ()  # other environments' outcomes, when they do not change the verdict
    others: tuple[Record, ...] = field(default=(), compare=False)

    @property
    def fits(self) -> bool:
        return self.verdict in FITTING

    @property
    def complete(self) -> bool:
        return self.decided_by is not None

    @property
    def duplicate_of(self) -> str:
        """The config whose binary this target's deciding build is ('' when it is its own): counted once."""
        return self.decided_by.duplicate_of if self.decided_by is not None else ""

    @property
    def column(self) -> str:
        """The deciding build's column (``mi300x``), or the target's name when that build is missing."""
        return self.decided_by.column if self.decided_by is not None else self.target


@dataclass(frozen=True)
class VendorFit:
    """Which of one vendor's targets in a row the config fits, does not fit, or has no deciding build on."""

    fitting: tuple[str, ...] = ()
    not_fitting: tuple[str, ...] = ()
    incomplete: tuple[str, ...] = ()

    @property
    def fits(self) -> str:
        """``all`` / ``some`` / ``none`` of the complete targets; ``incomplete`` when none is complete."""
        if not self.fitting and not self.not_fitting:
            return INCOMPLETE
        return "all" if not self.not_fitting else ("none" if not self.fitting else "some")

    def to_json(self) -> dict[str, Any]:
        return {
            "fitting": list(self.fitting),
            "not": list(self.not_fitting),
            "incomplete": list(self.incomplete),
            "fits": self.fits,
        }


@dataclass(frozen=True)
class RowVerdict:
    """One (kernel, dtype, shape, config, Triton) across the row's targets."""

    targets: dict[str, TargetVerdict]
    vendors: dict[str, VendorFit]
    text: str
    asymmetric: bool
    category: str  # for summaries: "fits both", "NVIDIA only", "mixed", "failed", ...

    @property
    def duplicate(self) -> bool:
        """Every target built this config into another config's binary: the row adds no config to a count."""
        return all(tv.duplicate_of for tv in self.targets.values())


def group_key(r: Record) -> tuple[str, ...]:
    return (r.kernel, r.dtype, r.shape_id, config_key(r.config), r.triton)


def _env_text(env: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(env.items())) or "Triton defaults"


def limit_text(r: Record) -> str:
    """The error flags of a record as ``resource value > limit``."""
    return "; ".join(f"{f.resource} {f.value:g} > {f.limit:g}" for f in r.flags if f.severity == "error")


def outcome(r: Record) -> Verdict:
    """What one build says on its own: ``fits``, ``exceeds`` or ``failed``."""
    if r.status != "ok":
        return "failed"
    return "fits" if r.fits is not False and not any(f.severity == "error" for f in r.flags) else "exceeds"


def outcome_text(r: Record) -> str:
    where = f"under {r.environment} ({_env_text(r.env)})"
    kind = outcome(r)
    if kind == "failed":
        return f"{where}: compile {r.status}: {' '.join(r.error.split())[:160]}"
    if kind == "exceeds":
        return f"{where}: {limit_text(r)}"
    return f"{where}: fits"


def judge_target(builds: list[Record]) -> TargetVerdict:
    """The verdict for one target from its builds under each swept environment."""
    deciding = builds[0].deciding_environment or DEFAULT
    decider = next((r for r in builds if r.environment == deciding), None)
    if decider is None:
        return TargetVerdict(
            builds[0].target,
            builds[0].vendor,
            INCOMPLETE,
            None,
            (
                f"no build under {deciding}, the environment that decides: the run did not build it "
                "(cut mid-case, or not selected)",
            ),
            tuple(outcome_text(o) for o in builds),
            tuple(builds),
        )
    others = tuple(r for r in builds if r is not decider)
    kind: Verdict = outcome(decider)
    reasons: list[str] = []
    beside = [outcome_text(o) for o in others]
    if kind == "failed":
        # the error's message line (the traceback and compiler output stay in the record and report.md's Failures)
        message = next((line.strip() for line in decider.error.splitlines() if line.strip()), "")
        reasons.append(f"{decider.status}: {message[:200]}")
    elif kind == "exceeds":
        reasons.append(limit_text(decider))
    else:
        risky = [o for o in others if outcome(o) != "fits"]
        spill = next((f for f in decider.flags if f.resource == "spills"), None)
        if risky:
            kind = "at risk"
            reasons = [outcome_text(o) for o in risky]
            beside = [outcome_text(o) for o in others if o not in risky]
        elif spill is not None:
            kind = "spills"
            reasons = [f"spills {spill.value:g} B a thread to memory"]
    return TargetVerdict(decider.target, decider.vendor, kind, decider, tuple(reasons), tuple(beside), others)


def judge_row(builds: Iterable[Record]) -> RowVerdict:
    by_target: dict[str, list[Record]] = defaultdict(list)
    for r in builds:
        by_target[r.target].append(r)
    targets = {t: judge_target(rs) for t, rs in sorted(by_target.items())}
    vendors: dict[str, VendorFit] = {}
    for vendor in dict.fromkeys(tv.vendor for tv in targets.values()):
        mine = [tv for tv in targets.values() if tv.vendor == vendor]
        vendors[vendor] = VendorFit(
            fitting=tuple(tv.target for tv in mine if tv.complete and tv.fits),
            not_fitting=tuple(tv.target for tv in mine if tv.complete and not tv.fits),
            incomplete=tuple(tv.target for tv in mine if not tv.complete),
        )
    return RowVerdict(targets, vendors, *_text(targets, vendors))


def _text(targets: dict[str, TargetVerdict], vendors: dict[str, VendorFit]) -> tuple[str, bool, str]:
    failed = [t for t, v in targets.items() if v.verdict == "failed"]
    risky = [t for t, v in targets.items() if v.verdict == "at risk"]
    spilling = [t for t, v in targets.items() if v.verdict == "spills"]
    missing = [t for t, v in targets.items() if not v.complete]
    states = {v: e.fits for v, e in vendors.items() if e.fits != INCOMPLETE}
    label = {v: VENDOR_LABEL.get(v, v) for v in vendors}
    if not states:
        return f"incomplete: no deciding build on {', '.join(missing)}", False, INCOMPLETE
    if len(states) == 1:
        ((vendor, state),) = states.items()
        if state == "all":
            text, category = "fits", "fits"
        elif state == "none":
            text, category = "exceeds a limit", "exceeds a limit"
        else:
            text, category = f"fits {', '.join(vendors[vendor].fitting)} only", "fits some"
        asymmetric = False
    elif all(s == "all" for s in states.values()):
        text, category, asymmetric = "fits both", "fits both", False
    elif all(s == "none" for s in states.values()):
        text, category, asymmetric = "fits neither", "fits neither", False
    elif sorted(states.values()) == ["all", "none"]:
        good = next(v for v, s in states.items() if s == "all")
        text, category, asymmetric = f"{label[good]} only", f"{label[good]} only", True
    else:
        parts = []
        for vendor, state in sorted(states.items(), key=lambda kv: (kv[0] != "nvidia", kv[0])):
            e = vendors[vendor]
            parts.append(
                f"{label[vendor]} "
                + ("all" if state == "all" else "none" if state == "none" else f"{', '.join(e.fitting)} only")
            )
        text, category, asymmetric = "; ".join(parts), "mixed", True
    if failed:
        text += f"; failed on {', '.join(failed)}"
        category = "failed"
    if risky:
        text += f" (at risk on {', '.join(risky)})"
    if spilling:
        text += f" (spills on {', '.join(spilling)})"
    if missing:  # what the complete targets say, and that the row is not whole: never a portability finding
        text += f"; incomplete on {', '.join(missing)}"
        category, asymmetric = INCOMPLETE, False
    return text, asymmetric, category


def judge(records: Iterable[Record]) -> dict[tuple[str, ...], RowVerdict]:
    """Every compile row of ``records``, by :func:`group_key`."""
    groups: dict[tuple[str, ...], list[Record]] = defaultdict(list)
    for r in records:
        if r.mode == "compile":
            groups[group_key(r)].append(r)
    return {k: judge_row(v) for k, v in groups.items()}
