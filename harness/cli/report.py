"""``harness report``: render one or several stored runs (terminal, report.md, report.html, vendor-eval, CSV)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
from pathlib import Path

from harness.analysis.findings import analyse
from harness.analysis.merge import merge_runs
from harness.analysis.shard_coverage import nights
from harness.cli.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    err,
    load_run,
    shard_dirs,
    write_output,
)
from harness.model.records import Record
from harness.model.run_info import RunInfo
from harness.render import report_md


def cmd_report(args: argparse.Namespace) -> int:
    from harness.analysis import gate

    try:
        fail_on = gate.parse_kinds(args.fail_on) if args.fail_on else ()
    except ValueError as exc:
        err(str(exc))
        return EXIT_INPUT
    loaded = []
    for d in (one for given in args.dirs for one in shard_dirs(given)):  # a night's folder: its shard runs
        stored = load_run(d)
        if stored is None:
            return EXIT_INPUT
        run, records = stored
        for warning in run.read_warnings or ():
            err(f"warning: {warning}")
        loaded.append((str(d), run, records))
    first = Path(args.dirs[0])  # a run directory, or its results.json named directly
    out = (
        Path(args.out)
        if args.out
        else ((first if first.is_dir() else first.parent) / "report.md" if len(args.dirs) == 1 else None)
    )
    if out:
        loaded = [_linked(label, run, records, out.parent) for label, run, records in loaded]
    incomplete: list[str] = []
    as_one: list[tuple[str, RunInfo, list[Record]]] = []
    for night in nights(loaded):  # every shard of each night once, a retried shard's latest attempt: one run
        for note in night.notes:
            err(f"note: {note}")
        incomplete += night.problems
        folder = os.path.commonpath(night.chosen) if night.chosen else ""
        where = os.path.relpath(folder, out.parent) if out and folder else None
        as_one.append((folder, night.run.updated(dir=where), night.records))
    loaded = [t for t in loaded if t[1].shard is None] + as_one
    runs, records, conflicts = merge_runs(loaded)
    if conflicts:
        for line in conflicts:
            err(f"cannot merge: {line}")
        err("merge runs of one matrix content, or report them separately")
        return EXIT_INPUT
    trends = None
    db = Path(args.history) if args.history else None
    if db is not None:
        from harness.analysis.trends import trends as read_trends
        from harness.results import history

        try:
            trends = read_trends(db)
        except history.HistoryError as exc:
            err(f"warning: {exc}; the report has no trends")
    found = analyse(runs, records, trends)  # every view below formats these findings
    verdict = None
    if args.baseline:
        from harness.cli.report_verdict import night_verdict

        compare_dir = Path(args.compare_dir) if args.compare_dir else None
        verdict = night_verdict(list(args.dirs), list(args.baseline), args.against, compare_dir)
        if verdict is None:
            return EXIT_INPUT
    text = report_md.markdown_report(found)
    if out:
        from harness.render.html_page import html_report

        if not write_output(out, text, "--out") or not write_output(
            out.with_suffix(".html"), html_report(found, verdict), "--out"
        ):
            return EXIT_INPUT
    if args.vendor_eval:
        from harness.render import vendor_eval

        evaluation = vendor_eval.markdown(list(found.evaluations))
        if out:
            if not write_output(out.parent / "vendor-eval.md", evaluation, "--vendor-eval"):
                return EXIT_INPUT
        else:
            print(evaluation)
    if args.csv:
        from harness.render import csv_export

        if not write_output(Path(args.csv), csv_export.to_csv(found), "--csv"):
            return EXIT_INPUT
    from harness.render import terminal

    width = terminal.WIDTH
    if sys.stdout.isatty():  # an 80-column terminal gets 79-column lines, never wrapped ones
        width = min(width, shutil.get_terminal_size((terminal.WIDTH + 1, 24)).columns - 1)
    for _, line in terminal.final_lines(found, args.wide, width):  # the run's own summary; --wide: the full tables
        print(line)
    if out:
        print(f"\nharness: report written to {out}")
    for problem in incomplete:  # rendered from what is there, and said last: the night is not whole
        err(f"night incomplete: {problem}")
    code = EXIT_INTERNAL if incomplete else EXIT_OK
    if fail_on:  # the gate harness run has, over every run merged here
        counts = gate.count(list(found.rows))
        tripped = gate.tripped(counts, fail_on)
        code = EXIT_FINDINGS if tripped and code == EXIT_OK else code
        print(terminal.findings_line(counts, fail_on, tripped, code))
    return code


def _linked(label: str, run: RunInfo, records: list[Record], page_dir: Path) -> tuple[str, RunInfo, list[Record]]:
    """The run as a page in ``page_dir`` links it: its directory, and each build's artifacts, relative to the page
    (the records store them relative to their own run's directory)."""
    where = os.path.relpath(Path(label if Path(label).is_dir() else Path(label).parent), page_dir)
    if where != ".":
        records = [
            dataclasses.replace(
                r, artifacts={k: a.updated(path=f"{where}/{a.path}") if a.path else a for k, a in r.artifacts.items()}
            )
            for r in records
        ]
    return label, run.updated(dir=where), records
