"""``harness compare``: the regression gate between two stored runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import err, load_night, write_output


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.analysis.compare import CompareInputError, compare_runs
    from harness.render import compare as render

    try:
        import scipy.stats  # noqa: F401 - the timing family is judged with it
    except ImportError:
        err("harness compare needs scipy (a dependency of the harness: pip install 'scipy>=1.11')")
        return 3
    # a run directory, or a night's folder of shard runs (every shard once, or it cannot be compared)
    base_side, new_side = load_night(args.base), load_night(args.new)
    if base_side is None or new_side is None:
        return 3
    (base_run, base), (new_run, new) = base_side, new_side
    for warning in (*(base_run.read_warnings or ()), *(new_run.read_warnings or ())):
        err(f"warning: {warning}")
    try:
        thresholds = {k: float(v) for k, v in (new_run.compare_thresholds or {}).items() if isinstance(v, (int, float))}
        noise = None
        if args.history:
            from harness.analysis.trends import noise_reader
            from harness.results import history

            try:
                noise = noise_reader(Path(args.history))
            except history.HistoryError as exc:
                err(str(exc))
                return 3
        cmp = compare_runs(
            base,
            new,
            threshold=args.threshold,
            alpha=args.alpha,
            min_us=args.min_us,
            normalise=not args.raw,
            thresholds=thresholds,
            compile_threshold=args.compile_threshold,
            base_run=base_run,
            new_run=new_run,
            allow_incomplete=args.allow_incomplete,
            fdr=args.fdr,
            history=noise,
            noise_floor=args.noise_floor,
        )
    except CompareInputError as exc:
        for line in str(exc).splitlines():
            err(line)
        return 3
    print(render.summary(cmp))
    if args.markdown and not write_output(Path(args.markdown), render.markdown(cmp), "--markdown"):
        return 3
    if args.json:
        import json

        if not write_output(Path(args.json), json.dumps(render.to_json(cmp), indent=1), "--json"):
            return 3
    return cmp.exit_code
