"""``harness report --baseline``: each given run judged against its baseline run, as ``harness compare`` judges
two runs with its defaults and the run's own thresholds, for report.html's first section."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.analysis.night_verdict import NightVerdict, UnitVerdict, unit_verdict
from harness.cli.common import err, load_night, write_output

NONE = "-"  # a run with no baseline run of its name


def night_verdict(
    dirs: list[str], baselines: list[str], against: str, compare_dir: Path | None = None
) -> NightVerdict | None:
    """``baselines[i]`` is ``dirs[i]``'s (``-``: none); None after a one-line error when the counts differ. With
    ``compare_dir``, each run's comparison is also written there as ``harness compare --markdown`` writes it, and
    ``verdicts.json`` lists each run's exit code and its meaning: what a merge gates on, from the one comparison
    report.html shows (never a second one)."""
    from harness.analysis.compare import CompareInputError, compare_runs

    if len(baselines) != len(dirs):
        err(f"--baseline: {len(baselines)} given for {len(dirs)} run(s); give one per run, '-' for none")
        return None
    root = os.path.commonpath([os.path.abspath(d) for d in dirs]) if len(dirs) > 1 else None
    units: list[UnitVerdict] = []
    for d, base in zip(dirs, baselines):
        name = os.path.relpath(os.path.abspath(d), root) if root else Path(d).name
        if base == NONE:
            units.append(unit_verdict(name, None))
            continue
        new_side, base_side = load_night(d), load_night(base)
        if new_side is None or base_side is None:
            units.append(unit_verdict(name, None, reason="a run could not be read (said above)"))
            continue
        (new_run, new), (base_run, old) = new_side, base_side
        thresholds = {k: float(v) for k, v in (new_run.compare_thresholds or {}).items() if isinstance(v, (int, float))}
        try:
            cmp = compare_runs(old, new, thresholds=thresholds, base_run=base_run, new_run=new_run)
        except CompareInputError as exc:
            units.append(unit_verdict(name, None, reason=str(exc).splitlines()[0]))
            continue
        units.append(unit_verdict(name, cmp))
        if compare_dir is not None:
            from harness.render.compare import markdown

            write_output(compare_dir / f"{_slug(name)}.md", markdown(cmp), "--compare-dir")
    if compare_dir is not None:
        from harness.render.compare import EXIT_MEANING

        said = [
            {"run": d, "unit": u.unit, "exit": u.exit_code, "meaning": u.reason or EXIT_MEANING.get(u.exit_code, "")}
            for d, base, u in zip(dirs, baselines, units)
            if base != NONE
        ]
        write_output(compare_dir / "verdicts.json", json.dumps(said, indent=1), "--compare-dir")
    return NightVerdict(against, tuple(units))


def _slug(name: str) -> str:
    return "__".join(Path(name).parts) or "run"
