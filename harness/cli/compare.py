"""``harness compare``: the regression gate between two stored runs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from harness.analysis.compare import Comparison
from harness.analysis.compiled_compare import CompiledComparison
from harness.cli.common import err, load_night, shard_dirs, write_output


def _write_diffs(args: argparse.Namespace, cmp: Comparison) -> set[str] | None:
    """``--diffs DIR``: each changed binary's TTGIR and PTX / AMDGCN diff; the labels written (None: an error)."""
    from harness.analysis.compare import ir_diff

    pairs = [(c.label, *c.builds) for c in cmp.changes if c.kind == "code" and c.builds is not None]
    out = Path(args.diffs)
    written: set[str] = set()
    for d in ir_diff.diffs(pairs, _roots(args.base), _roots(args.new)):
        if not write_output(out / ir_diff.diff_name(d.label, d.kind), d.text, "--diffs"):
            return None
        written.add(f"{d.label}\0{d.kind}")
    err(f"wrote {len(written)} IR diff(s) of {len(pairs)} changed binaries to {out}")
    return written


def _roots(given: str) -> list[Path]:
    return [Path(d) for d in shard_dirs(given)] or [Path(given)]


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.analysis.compare import CompareInputError, compare_runs
    from harness.analysis.compare.headline import headline
    from harness.render import compare as render
    from harness.render.compiled import comparison

    try:
        import scipy.stats  # noqa: F401 - the timing family is judged with it
    except ModuleNotFoundError as exc:  # scipy absent; not any ImportError (an interrupt can take that form)
        if (exc.name or "").partition(".")[0] != "scipy":
            raise
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
    compiled = _compiled_kernels(base, new, _roots(args.base), _roots(args.new))
    said = headline(base, new, base_run, new_run, compiled)
    for line in render.headline_lines(said, cmp.exit_code):
        print(line)
    print(render.summary(cmp))
    if compiled is not None:
        for line in comparison(compiled):
            print(line)
    linked = None
    if args.diffs:
        linked = _write_diffs(args, cmp)
        if linked is None:
            return 3
    if args.markdown:
        rel = os.path.relpath(args.diffs, Path(args.markdown).parent) if args.diffs else None
        if not write_output(Path(args.markdown), render.markdown(cmp, rel, linked, said), "--markdown"):
            return 3
    if args.json:
        import json

        if not write_output(Path(args.json), json.dumps(render.to_json(cmp), indent=1), "--json"):
            return 3
    return cmp.exit_code


def _compiled_kernels(
    base: list[Any], new: list[Any], base_roots: list[Path], new_roots: list[Path]
) -> CompiledComparison | None:
    """Two runs with compiled entries: their kernels as Inductor wrote them, compared (kernels added, removed,
    rewritten: the torch bump's question). Words only: the records' comparison decides the exit code."""
    from harness.analysis.compiled_compare import compare, graphs_of

    def source_in(roots: list[Path]) -> Any:
        def source(record: Any) -> str:
            artifact = record.artifacts.get("inductor")
            for root in roots if artifact is not None else []:
                try:
                    return (root / artifact.path).read_text()
                except OSError:
                    continue
            return ""

        return source

    if not any(r.inductor.entry for r in new) or not any(r.inductor.entry for r in base):
        return None
    return compare(graphs_of(base, source_in(base_roots)), graphs_of(new, source_in(new_roots)))
