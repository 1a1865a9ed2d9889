"""The nightly's merge job: one report for every host and pin, the night judged against the baseline, history.

    python ci/nightly_merge.py COLLECTED --out DIR --store STORE --night ID --expected expected.json [--first-night]
    python ci/nightly_merge.py COLLECTED --out DIR --previous PREV      (against a folder, nothing kept)
    python ci/nightly_merge.py accept COLLECTED --store STORE --night ID --reason TEXT [--by WHO] [--expected F]

COLLECTED holds the night's run directories (CI artifacts unpacked side by side: ``static-triton36/shard1``,
``gpu-h100/shard2``...); a run directory is one with a ``results.json``. The shard runs of one job count as one
run, their folder. The job:

1. Every run ``expected.json`` names (``ci/nightly_plan.py``, written before the jobs ran) must be there; each
   missing one is named, and such a night is never kept as the baseline.
2. ``harness report`` over all of them: ``DIR/report.md``, ``DIR/report.html``, ``DIR/results.csv``.
3. Each run compared (``harness compare``) with its namesake in the baseline, the last night kept in STORE
   (``ci/nightly_store.py``); a re-run of a night already kept is compared with the one it replaced.
4. ``harness history add`` of every run into STORE's history file (or ``--history``).
5. A night with nothing worse, whole, becomes the baseline. ``DIR/summary.md`` (and ``$GITHUB_STEP_SUMMARY``)
   opens with the night's verdict; ``DIR/verdict.json`` holds it for the jobs that follow.

``accept`` makes a night the baseline on purpose (a Triton bump that moves a config over a limit), with the
reason, recorded in the store's log; the next night is judged against it.

Exit code: 0 nothing worse; 1 a timing regression only; 2 new failures (a compile, correctness or limit verdict
got worse); 3 the night is incomplete (an expected run or a shard missing) or not comparable; 4 the report could not
be made; 5 no baseline to judge against (``--first-night`` starts one on purpose).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ci/: the plan and the store beside this script

from nightly_plan import ExpectedRun, read_expected  # noqa: E402
from nightly_store import Pointer, Store, cleanup, describe  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
NO_BASELINE = 5


def run_dirs(root: Path) -> list[Path]:
    """Every directory under ``root`` that holds a run's ``results.json``, in a stable order."""
    return sorted(p.parent for p in root.rglob("results.json") if p.is_file())


def units(runs: list[Path]) -> list[Path]:
    """Each run directory, except that the shard runs of one job (``harness run --shard``, side by side in one
    folder) are that folder, which harness report and compare take as one run once every shard is there."""
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


def missing(collected: Path, expected: list[ExpectedRun]) -> list[str]:
    """Each expected job that brought nothing, by unit: ``gpu-mi300x (shards 1/2, 2/2)``."""
    lost: dict[str, list[str]] = {}
    for run in expected:
        if not (collected / run.path / "results.json").is_file():
            lost.setdefault(run.unit, []).append(f"{run.shard}/{run.of}")
    return [f"`{unit}` (shard{'s' if len(s) > 1 else ''} {', '.join(s)})" for unit, s in lost.items()]


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    return subprocess.run([sys.executable, "-m", "harness", *args], env=env, capture_output=True, text=True)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collected", type=Path, help="folder holding tonight's run directories")
    ap.add_argument("--out", type=Path, required=True, help="where the merged report, summary and verdict go")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--store", type=Path, help="the baseline store (ci/nightly_store.py), synced by the job")
    where.add_argument("--previous", type=Path, help="compare with this folder instead; nothing is kept")
    ap.add_argument("--night", help="tonight's id (the workflow run id); needed with --store")
    ap.add_argument("--expected", type=Path, help="the plan job's expected.json: every run it names must be here")
    ap.add_argument("--first-night", action="store_true", help="no baseline yet on purpose: tonight starts one")
    ap.add_argument("--history", help="SQLite history file (default: the store's; $HARNESS_HISTORY without one)")
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["accept"]:
        return accept(argv[1:])
    ap = _parser()
    args = ap.parse_args(argv)
    if args.store and not args.night:
        ap.error("--store needs --night (the workflow run id)")
    if args.expected and not args.expected.is_file():  # the plan job did not run, or its artifact did not come
        print(f"nightly_merge: {args.expected}: the night's expected runs are missing, so nothing can say the night "
              "is whole (the plan job's artifact)", file=sys.stderr)  # fmt: skip
        return 3
    found = run_dirs(args.collected) if args.collected.is_dir() else []
    lost = missing(args.collected, read_expected(args.expected)) if args.expected else []
    if not found:
        print(f"nightly_merge: no run directory (no results.json) under {args.collected}", file=sys.stderr)
        if lost:
            print(f"nightly_merge: night incomplete: missing {'; '.join(lost)}", file=sys.stderr)
        return 4
    runs = units(found)
    args.out.mkdir(parents=True, exist_ok=True)
    head: list[str] = []  # the verdict, first
    body = [f"## {len(runs)} run(s)", ""]
    body += [
        f"- `{r.relative_to(args.collected)}`" + ("" if (r / "results.json").is_file() else " (its shards)")
        for r in runs
    ]
    if lost:
        head.append("**Night incomplete:** missing " + "; ".join(lost) + ". Not kept as the baseline.")

    base, label, temp, against = _baseline(args)
    judged = []  # report.html opens with tonight against the baseline, run by run ('-': no namesake there)
    if base is not None:
        pairs = [base / r.relative_to(args.collected) for r in runs]
        judged = ["--baseline", *(str(p) if p.is_dir() and run_dirs(p) else "-" for p in pairs)]
        judged += ["--against", against, "--compare-dir", str(args.out / "compare")]
    report = harness(
        "report", *map(str, runs), "--out", str(args.out / "report.md"), "--csv", str(args.out / "results.csv"), *judged
    )
    incomplete = [
        ln.split("night incomplete: ", 1)[1] for ln in report.stderr.splitlines() if "night incomplete: " in ln
    ]
    said_incomplete = report.returncode == 3 and bool(incomplete)
    if lost:  # the expected runs name each missing shard with its job: the report's "shard i/n missing" repeats it
        incomplete = [p for p in incomplete if not re.fullmatch(r"shards? [0-9/, ]+ missing", p.strip())]
    if said_incomplete:
        if incomplete:
            head.append("**Night incomplete:** " + "; ".join(incomplete))
    elif report.returncode != 0:
        message = (report.stderr or report.stdout).strip().splitlines()
        print(f"nightly_merge: harness report failed: {message[-1] if message else report.returncode}", file=sys.stderr)
        head.append("**The merged report could not be made:** " + (message[-1] if message else ""))
        cleanup(temp)
        return _finish(args, head, body, 4, {})
    body += ["", "Merged report: `report.html`, `report.md`, `results.csv`.", "", report.stdout.strip(), ""]
    flaky = sorted(args.collected.rglob("*.flaky"))  # ci/gpu_nightly.sh: a GPU shard that passed on its retry
    if flaky:
        body += ["**Flaky (passed on a retry):**", ""]
        body += [f"- `{f.relative_to(args.collected).with_suffix('')}`: {f.read_text().strip()}" for f in flaky]
        body.append("")

    worst = 3 if (lost or said_incomplete) else 0
    codes: dict[str, int] = {}
    head.append(label)
    if base is None:
        if not (args.first_night or args.previous is None and args.store is None):
            worst = max(worst, NO_BASELINE)
    else:
        # the comparisons report.html opens with (harness report --compare-dir): each run judged once
        body += ["## Against the baseline", "", "| run | exit | meaning |", "| --- | --- | --- |"]
        verdicts = args.out / "compare" / "verdicts.json"
        judged_runs = {v["run"]: v for v in json.loads(verdicts.read_text())} if verdicts.is_file() else {}
        for run in runs:
            rel = run.relative_to(args.collected)
            verdict = judged_runs.get(str(run))
            if verdict is None:
                body.append(f"| `{rel}` | — | new: no run of that name in the baseline |")
                continue
            code = int(verdict["exit"])
            body.append(f"| `{rel}` | {code} | {str(verdict['meaning']).replace('|', '/')} |")
            codes[str(rel)] = code
            worst = max(worst, code)
        body.append("")
    cleanup(temp)

    db = args.history or (str(Store(args.store).history) if args.store else os.environ.get("HARNESS_HISTORY"))
    if db:
        hist = harness("history", "add", "--db", db, *map(str, found))
        body += [
            f"History ({Path(db).name}): " + (hist.stdout.strip().splitlines() or [f"exit {hist.returncode}"])[-1],
            "",
        ]
        if hist.returncode != 0:
            print(f"nightly_merge: harness history add failed: {hist.stderr.strip()[-300:]}", file=sys.stderr)
    kept = False
    if args.store and worst == 0:
        store = Store(args.store)
        if store.pointer().night != args.night:
            store.keep(args.night, args.collected, "passed")
            kept = True
        head.append(f"Night {args.night} is the baseline now." if kept else f"Night {args.night} stays the baseline.")
    elif args.store:
        head.append("Not kept as the baseline: " + _meaning(worst) + ".")
    return _finish(args, head, body, worst, codes, kept=kept, missing=lost)


def _baseline(args: argparse.Namespace) -> tuple[Path | None, str, list[Path], str]:
    """The folder to compare with, the summary's line saying which, temporary folders to remove, and its short
    name for report.html."""
    if args.previous is not None:
        if args.previous.is_dir() and run_dirs(args.previous):
            return args.previous, f"Compared with `{args.previous}`.", [], str(args.previous)
        return None, f"**No baseline:** `{args.previous}` holds no run.", [], ""
    if args.store is None:
        return None, "No baseline given: nothing compared.", [], ""
    pointer: Pointer = Store(args.store).pointer()
    night, how = pointer.night, ""
    if pointer.log:
        how = " — " + describe(pointer.log[-1])
    if night == args.night:  # a re-run after this night was kept: judge it against the one it replaced
        night = pointer.previous
        if night is None:
            return None, f"Re-run of night {args.night}, the first night: nothing to compare with.", [], ""
        how = f" (re-run of night {args.night}, already kept: compared with the baseline before it)"
    if night is None:
        if args.first_night:
            return None, "**First night** (started as such): nothing to compare with.", [], ""
        return (
            None,
            (
                f"**No baseline:** the store holds no kept night, so nothing was judged (exit {NO_BASELINE}). "
                "Start one on purpose with --first-night (the workflow's first_night input)."
            ),
            [],
            "",
        )
    folder = Store(args.store).night_dir(night)
    if folder is None:
        return None, f"**No baseline:** the store names night {night} but lacks its runs (exit {NO_BASELINE}).", [], ""
    return folder, f"Judged against night {night}{how}.", [folder], f"night {night}"


def _meaning(code: int) -> str:
    return {
        0: "nothing worse",
        1: "a timing regression",
        2: "new failures",
        3: "the night is incomplete or not comparable",
        4: "the report could not be made",
        NO_BASELINE: "no baseline to judge against",
    }.get(code, f"exit {code}")


def _finish(args: argparse.Namespace, head: list[str], body: list[str], worst: int, codes: dict[str, int],
            kept: bool = False, missing: list[str] | None = None) -> int:  # fmt: skip
    title = f"# Nightly{' ' + args.night if args.night else ''}: {_meaning(worst)} (exit {worst})"
    _write_summary(args.out, [title, "", *head, "", *body])
    verdict = {"exit": worst, "meaning": _meaning(worst), "night": args.night, "kept": kept,
               "missing": missing or [], "comparisons": codes}  # fmt: skip
    (args.out / "verdict.json").write_text(json.dumps(verdict, indent=1) + "\n")
    print(f"nightly_merge: {title.lstrip('# ')}")
    for line in head:
        print(f"nightly_merge: {line}")
    return worst


def accept(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="nightly_merge.py accept", description="make a night the baseline on purpose")
    ap.add_argument("collected", type=Path, help="that night's run directories (its artifacts, unpacked)")
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--night", required=True, help="the night's id (its workflow run id)")
    ap.add_argument("--reason", required=True, help="why its changes are intended (kept in the store's log)")
    ap.add_argument("--by", default="", help="who accepts it")
    ap.add_argument("--expected", type=Path, help="its expected.json: an incomplete night cannot be accepted")
    args = ap.parse_args(argv)
    if not args.reason.strip():
        ap.error("--reason must say why")
    if not args.collected.is_dir() or not run_dirs(args.collected):
        print(f"nightly_merge accept: no run directory under {args.collected}", file=sys.stderr)
        return 4
    lost = missing(args.collected, read_expected(args.expected)) if args.expected else []
    if lost:
        print(f"nightly_merge accept: night {args.night} is incomplete (missing {'; '.join(lost)}); not accepted",
              file=sys.stderr)  # fmt: skip
        return 3
    pointer = Store(args.store).keep(args.night, args.collected, "accepted", args.reason.strip(), args.by)
    print(f"nightly_merge: {describe(pointer.log[-1])}; the next night is judged against it")
    return 0


def _write_summary(out: Path, lines: list[str]) -> None:
    """``DIR/summary.md`` whole; the job summary the same, cut below GitHub's 1 MiB if it is longer."""
    from job_summary import append  # ci/, beside this script

    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        append(text, "`summary.md` in the nightly-report artifact")


if __name__ == "__main__":
    sys.exit(main())
