"""``harness report``: render one or several stored runs (terminal, report.md, report.html, vendor-eval, CSV)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness.analysis.findings import analyse
from harness.analysis.merge import merge_runs
from harness.analysis.shard_coverage import nights
from harness.cli.common import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, err, load_run, shard_dirs, write_output
from harness.render import tables


def cmd_report(args: argparse.Namespace) -> int:
    loaded = []
    for d in (one for given in args.dirs for one in shard_dirs(given)):  # a night's folder: its shard runs
        stored = load_run(d)
        if stored is None:
            return EXIT_INPUT
        run, records = stored
        for warning in run.read_warnings or ():
            err(f"warning: {warning}")
        loaded.append((str(d), run, records))
    incomplete: list[str] = []
    chosen: set[str] = set()
    for night in nights(loaded):  # every shard of each night once; a retried shard's earlier attempt left out
        for note in night.notes:
            err(f"note: {note}")
        incomplete += night.problems
        chosen.update(night.chosen)
    loaded = [t for t in loaded if t[0] in chosen or t[1].shard is None]
    first = Path(args.dirs[0])  # a run directory, or its results.json named directly
    out = (
        Path(args.out)
        if args.out
        else ((first if first.is_dir() else first.parent) / "report.md" if len(args.dirs) == 1 else None)
    )
    if out:  # each run's directory as the page links it: relative to where the report goes
        loaded = [
            (
                label,
                run.updated(
                    dir=os.path.relpath(Path(label if Path(label).is_dir() else Path(label).parent), out.parent)
                ),
                records,
            )
            for label, run, records in loaded
        ]
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
    text = tables.markdown_report(found)
    if out:
        from harness.render.html_page import html_report

        if not write_output(out, text, "--out") or not write_output(
            out.with_suffix(".html"), html_report(found), "--out"
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

    for _, line in terminal.final_lines(found, args.wide):  # the run's own summary; --wide: the full tables
        print(line)
    if out:
        print(f"\nharness: report written to {out}")
    for problem in incomplete:  # rendered from what is there, and said last: the night is not whole
        err(f"night incomplete: {problem}")
    return EXIT_INTERNAL if incomplete else EXIT_OK
