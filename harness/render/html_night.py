"""report.html's first section when the report was given a baseline: the night's verdict, then per run what got
worse, what got better, what is new and what is missing, as :mod:`harness.analysis.night_verdict` decided it."""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.night_verdict import NEW, NightVerdict, UnitVerdict
from harness.render.compare import EXIT_MEANING, _line

STYLE = ".night{border:2px solid #888;padding:.4em 1em;margin:.5em 0 1em}.night.bad{border-color:#c0392b}" \
    ".night.ok{border-color:#27ae60}.night li{font-size:13px}.night h2{margin:.2em 0}"  # fmt: skip
SHOWN = 20  # lines per list; the rest is counted (the whole is in the merge's compare/*.md)


@dataclass(frozen=True)
class UnitView:
    unit: str
    said: str  # "exit 2: worse: ..." or "new: no run of that name in the baseline"
    lists: tuple[tuple[str, tuple[str, ...], int], ...]  # (title, lines shown, lines not shown)


@dataclass(frozen=True)
class NightView:
    title: str
    bad: bool
    units: tuple[UnitView, ...]


def _listed(title: str, lines: list[str]) -> tuple[str, tuple[str, ...], int] | None:
    return (f"{title} ({len(lines)})", tuple(lines[:SHOWN]), max(0, len(lines) - SHOWN)) if lines else None


def _unit(u: UnitVerdict) -> UnitView:
    if u.exit_code == NEW:
        return UnitView(u.unit, "new: no run of that name in the baseline", ())
    said = f"exit {u.exit_code}: {EXIT_MEANING.get(u.exit_code, '')}" + (f" ({u.reason})" if u.reason else "")
    lists = [
        _listed("worse", [_line(c) for c in u.worse]),
        _listed("missing tonight", list(u.missing)),
        _listed("better", [_line(c) for c in u.better]),
        _listed("new tonight", list(u.new)),
    ]
    return UnitView(u.unit, said, tuple(x for x in lists if x))


def view(night: NightVerdict | None) -> NightView | None:
    if night is None:
        return None
    worse, better, new, missing = night.counts
    code = night.exit_code
    verdict = "no run compared" if code == NEW else EXIT_MEANING.get(code, f"exit {code}")
    title = (
        f"Tonight against {night.against}: {verdict} — {worse} worse, {better} better, {new} new, {missing} missing "
        f"over {len(night.units)} run(s)"
    )
    return NightView(title, code > 0, tuple(_unit(u) for u in night.units))
