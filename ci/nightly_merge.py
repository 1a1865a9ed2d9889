"""The nightly's merge job: one report for every host and pin, night-to-night comparison, history.

    python ci/nightly_merge.py COLLECTED --out DIR [--previous PREV] [--history DB]
    python ci/nightly_merge.py --keep COLLECTED --into PREV      (tonight as the baseline, without artifacts)

COLLECTED holds the night's run directories at any depth (CI artifacts unpacked side by side:
``static-triton36/<run>/``, ``gpu-h100/``...); a run directory is one with a ``results.json``. The shard runs of
one job (``harness run --shard``: ``static-triton36/shard1``, ``shard2``...) count as one run, their folder: the
report and the comparison take them together, and a missing or doubled shard makes that comparison's exit 3.
The job:

1. ``harness report`` over all of them: ``DIR/report.md``, ``DIR/report.html``, ``DIR/results.csv``
   (merging is by case; summaries per Triton version and host; incompatible runs are refused).
2. For every run directory that has a namesake (same path under the artifact root) in PREV, the
   previous night's collection, ``harness compare PREV/x COLLECTED/x`` into ``DIR/compare/x.md``.
3. ``harness history add`` of every run into DB (default ``$HARNESS_HISTORY``; skipped when neither).
4. ``DIR/summary.md``: what ran, each comparison's verdict; appended to ``$GITHUB_STEP_SUMMARY``
   when that is set (the job summary GitHub shows), cut below its 1 MiB limit (``ci/job_summary.py``).

Exit code: the worst of the comparisons' (``harness compare``: 0 nothing worse, 1 performance regression,
2 new failures, 3 not comparable, also when a job's night lost a shard), or 4 when the report itself could not
be made. A night without a
previous one compares nothing and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_dirs(root: Path) -> list[Path]:
    """Every directory under ``root`` that holds a run's ``results.json``, in a stable order."""
    return sorted(p.parent for p in root.rglob("results.json") if p.is_file())


def units(runs: list[Path]) -> list[Path]:
    """What a night is made of: each run directory, except that the shard runs of one job (``harness run --shard``,
    one CI job each, side by side in one folder) are that folder, which harness report and compare take as one
    run once every shard is there."""
    out: list[Path] = []
    for run in runs:
        try:
            sharded = json.loads((run / "results.json").read_text()).get("run", {}).get("shard") is not None
        except (OSError, ValueError, AttributeError):
            sharded = False
        unit = run.parent if sharded else run
        if unit not in out:
            out.append(unit)
    return out


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    return subprocess.run([sys.executable, "-m", "harness", *args], env=env, capture_output=True, text=True)


def _slug(rel: Path) -> str:
    return "__".join(rel.parts) or "run"


def keep(collected: Path, into: Path) -> int:
    """Tonight's runs as tomorrow's baseline: every file but the build artifacts (the comparison reads records and
    their sha256s, not the binaries; a smoke run's artifacts are about 160 MB)."""
    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(collected, into, ignore=shutil.ignore_patterns("artifacts"))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collected", type=Path, nargs="?", help="folder holding tonight's run directories")
    ap.add_argument("--out", type=Path, help="where the merged report and summary go")
    ap.add_argument("--previous", type=Path, help="the previous night's collection, for harness compare")
    ap.add_argument("--history", help="SQLite history file (default $HARNESS_HISTORY; none: no history)")
    ap.add_argument("--keep", type=Path, metavar="COLLECTED", help="only copy COLLECTED, without artifacts, --into")
    ap.add_argument("--into", type=Path, help="with --keep: the baseline folder to (re)write")
    args = ap.parse_args(argv)
    if args.keep:
        if not args.into:
            ap.error("--keep needs --into")
        return keep(args.keep, args.into)
    if args.collected is None or args.out is None:
        ap.error("COLLECTED and --out are required")

    found = run_dirs(args.collected)
    if not found:
        print(f"nightly_merge: no run directory (no results.json) under {args.collected}", file=sys.stderr)
        return 4
    runs = units(found)  # a folder of one job's shard runs counts as one run
    args.out.mkdir(parents=True, exist_ok=True)
    summary = [f"# Nightly: {len(runs)} run(s)", ""]
    summary += [
        f"- `{r.relative_to(args.collected)}`" + ("" if (r / "results.json").is_file() else " (its shards)")
        for r in runs
    ]

    report = harness(
        "report", *map(str, runs), "--out", str(args.out / "report.md"), "--csv", str(args.out / "results.csv")
    )
    incomplete = [
        ln.split("night incomplete: ", 1)[1] for ln in report.stderr.splitlines() if "night incomplete: " in ln
    ]
    if report.returncode == 3 and incomplete:  # rendered from what is there; the night is not whole: said, exit 3
        summary += ["**Night incomplete:** " + "; ".join(incomplete), ""]
    elif report.returncode != 0:
        message = (report.stderr or report.stdout).strip().splitlines()
        print(f"nightly_merge: harness report failed: {message[-1] if message else report.returncode}", file=sys.stderr)
        summary += ["", "**The merged report could not be made:** " + (message[-1] if message else "")]
        _write_summary(args.out, summary)
        return 4
    summary += ["", "Merged report: `report.html`, `report.md`, `results.csv`.", "", report.stdout.strip(), ""]

    flaky = sorted(args.collected.rglob("*.flaky"))  # ci/gpu_nightly.sh: a GPU shard that passed on its retry
    if flaky:
        summary += ["**Flaky (passed on a retry):**", ""]
        summary += [f"- `{f.relative_to(args.collected).with_suffix('')}`: {f.read_text().strip()}" for f in flaky]
        summary.append("")
    worst = 3 if incomplete else 0
    if args.previous is not None and args.previous.is_dir():
        summary += ["## Against the previous night", "", "| run | exit | meaning |", "| --- | --- | --- |"]
        (args.out / "compare").mkdir(exist_ok=True)
        for run in runs:
            rel = run.relative_to(args.collected)
            base = args.previous / rel
            if not base.is_dir() or not run_dirs(base):
                summary.append(f"| `{rel}` | — | no run of that name the previous night |")
                continue
            md = args.out / "compare" / f"{_slug(rel)}.md"
            cmp = harness("compare", str(base), str(run), "--markdown", str(md))
            last = (cmp.stdout.strip().splitlines() or cmp.stderr.strip().splitlines() or [""])[-1]
            summary.append(f"| `{rel}` | {cmp.returncode} | {last.replace('|', '/')} |")
            worst = max(worst, cmp.returncode)
        summary.append("")
    else:
        summary += ["No previous night to compare with.", ""]

    db = args.history or os.environ.get("HARNESS_HISTORY")
    if db:
        hist = harness("history", "add", "--db", db, *map(str, found))
        summary += [f"History ({db}): " + (hist.stdout.strip().splitlines() or [f"exit {hist.returncode}"])[-1], ""]
        if hist.returncode != 0:
            print(f"nightly_merge: harness history add failed: {hist.stderr.strip()[-300:]}", file=sys.stderr)
    _write_summary(args.out, summary)
    print(f"nightly_merge: {len(runs)} run(s) merged into {args.out}; comparison exit {worst}")
    return worst


def _write_summary(out: Path, lines: list[str]) -> None:
    """``DIR/summary.md`` whole; the job summary the same, cut below GitHub's 1 MiB if it is longer."""
    from job_summary import append  # ci/, beside this script

    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        append(text, "`summary.md` in the nightly-report artifact")


if __name__ == "__main__":
    sys.exit(main())
