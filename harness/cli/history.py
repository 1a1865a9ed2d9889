"""``harness history``: store nights of results, show trends and step changes."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import EXIT_INPUT, EXIT_OK, err, load_run


def cmd_history(args: argparse.Namespace) -> int:
    from harness.analysis import trends
    from harness.render.terminal import trend_line
    from harness.results import history

    db = Path(args.db)
    try:
        if args.action == "add":
            for d in args.dirs:
                loaded = load_run(d)
                if loaded is None:
                    return EXIT_INPUT
                if loaded[0].unfinished:  # as harness compare refuses it: a night's figures are a whole night's
                    err(
                        f"{d}: the run was interrupted or is still being written (no end recorded): history keeps "
                        f"whole nights; finish it with harness run MATRIX --resume {d}, then add it"
                    )
                    return EXIT_INPUT
                print(f"harness: {history.add(db, *loaded)} figure(s) of {d} stored in {db}")
            return EXIT_OK
        found = trends.trends(db, args.k or "", args.threshold, args.hold)
    except history.HistoryError as exc:
        err(str(exc))
        return EXIT_INPUT
    for t in found:
        if t.step is not None or not args.steps_only:
            print(trend_line(t))
    steps = [t for t in found if t.step is not None]
    print(
        f"harness: {len(found)} series, {len(steps)} step change(s) (a shift beyond {100 * args.threshold:g}% "
        f"held for the last {args.hold} nights)"
    )
    return EXIT_OK
