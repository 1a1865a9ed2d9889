"""``harness`` command line: run, validate, targets, report.

Exit codes (also in README):
  0  every case compiled (and matched its reference where checked)
  1  at least one case failed: compile error, crash, timeout or mismatch
  2  bad input: invalid matrix, unknown target, unreadable or damaged results, a run directory in use or
     holding another run's records (see --resume / --force), bad arguments
  3  interrupted (Ctrl-C or SIGTERM; --resume finishes the run), or an internal error of pytest or the harness
  4  no case was selected (everything deselected by -k, --targets or Triton version)
``harness compare`` has its own codes: 0 nothing worse, 1 performance regression only, 2 a worse status,
verdict or correctness, or builds the new run selected but does not hold, 3 the runs cannot be compared
(also: a run was interrupted, unless --allow-incomplete).
Limit findings (a config that exceeds a target's limit) are results, not failures.
"""
from __future__ import annotations

import argparse
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from harness import rundir, tritoncompat
from harness.cli_parser import build_parser
from harness.matrix import MatrixError, parse
from harness.records import ResultsFileError, load_results
from harness.reports import tables
from harness.targets import catalogue


def default_matrix() -> Path:
    """``matrices/smoke.yaml`` of the checkout in the working directory, else of the harness's own tree."""
    from harness.loader import REPO_MATRICES

    here = Path.cwd() / "matrices" / "smoke.yaml"
    return here if here.is_file() else REPO_MATRICES / "smoke.yaml"
EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL, EXIT_NOTHING = 0, 1, 2, 3, 4
_PYTEST_TO_EXIT = {0: EXIT_OK, 1: EXIT_FAILED, 2: EXIT_INTERNAL, 3: EXIT_INTERNAL, 4: EXIT_INPUT, 5: EXIT_NOTHING}


def _err(message: str) -> None:
    print(f"harness: {message}", file=sys.stderr)


def _compile_count(matrix: Any) -> int:
    """Builds a run makes per Triton version: the compile cases' configs (each shape's valid ones, per dtype,
    per target column of the compile-environment sweep), counted from the very cases a run expands."""
    from harness.cases import expand

    cases = [c for c in expand(matrix, "installed") if not c.is_interpret]
    return sum(len(c.configs) for c in cases) // max(1, len(matrix.triton))


def cmd_validate(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for file in args.files:
        try:
            matrix = parse(file)
        except MatrixError as exc:
            for problem in exc.problems:
                print(problem)
            status = EXIT_INPUT
            continue
        from harness.agreement import disagreements as launch_disagreements

        disagreements = launch_disagreements(matrix)
        for line in disagreements:
            print(f"{file}: {line}")
        if disagreements:
            status = EXIT_INPUT
            continue
        n = _compile_count(matrix)
        columns = sum(len(matrix.environments_for(t)) for t in matrix.targets)
        print(f"{file}: ok ({len(matrix.kernels)} kernels, {len(matrix.targets)} targets in {columns} target "
              f"columns with the compile-environment sweep, {n} compiles per Triton version)")
        installed = tritoncompat.installed_triton_version()
        for pin in matrix.triton:
            print(f"  triton {tritoncompat.describe_pin(pin, installed)}")
    return status


def cmd_targets(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    rows = []
    for t in catalogue().values():
        rows.append([t.name, t.vendor, t.arch, t.warp_size, t.shared_per_block, t.max_threads_per_block,
                     t.max_regs_per_thread, t.sm_count, t.hbm_tbps,
                     *("-" if v is None else v for v in (t.fp8_tflops, t.fp16_tflops, t.tf32_tflops, t.fp32_tflops))])
    print(tabulate(rows, headers=["target", "vendor", "arch", "warp", "smem/LDS per block B", "threads/block",
                                  "regs/thread", "SMs/CUs", "HBM TB/s", "fp8 TFLOP/s", "fp16/bf16 TFLOP/s",
                                  "tf32 TFLOP/s", "fp32 TFLOP/s"]))
    if args.sources:
        for t in catalogue().values():
            print(f"\n{t.name}:")
            for key, source in t.sources:
                print(f"  {key}: {source}")
    return EXIT_OK


def _plugin_autoloaded() -> bool:
    return any(ep.value.startswith("harness.plugin") for ep in metadata.entry_points(group="pytest11"))


def cmd_run(args: argparse.Namespace) -> int:
    # every path is made absolute before the matrix is read: a kernel module may chdir when it is imported
    matrix_path = Path(args.matrix) if args.matrix else default_matrix()
    matrix_abs = matrix_path.absolute()
    for name in ("out", "resume", "winners_from"):
        if getattr(args, name):
            setattr(args, name, str(Path(getattr(args, name)).absolute()))
    out = Path(args.resume or args.out) if (args.resume or args.out) else rundir.default_name().absolute()
    try:
        matrix = parse(matrix_path)
    except MatrixError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return EXIT_INPUT
    if args.targets is not None:
        named = [t.strip() for t in args.targets.split(",")]
        unknown = [t for t in named if t not in catalogue()]
        if unknown:
            _err(f"--targets: unknown target(s) {', '.join(repr(t) for t in unknown)} (known: "
                 f"{', '.join(catalogue())})")
            return EXIT_INPUT
        if len(set(named)) != len(named):
            _err(f"--targets: a target is named twice in {args.targets!r}")
            return EXIT_INPUT
    if args.device_as:
        unknown = [t for t in args.device_as.split(",") if t.strip() not in catalogue()]
        if unknown:
            _err(f"--device-as: unknown target(s) {', '.join(unknown)} (known: {', '.join(catalogue())})")
            return EXIT_INPUT
    if args.resume and args.out and Path(args.resume) != Path(args.out):
        _err("--resume DIR and --out name different directories: --resume alone says where")
        return EXIT_INPUT
    if args.resume and args.force:
        _err("--resume keeps a run's records and --force replaces them: choose one")
        return EXIT_INPUT
    try:
        rundir.check_usable(out)
    except rundir.RunDirError as exc:
        _err(str(exc))
        return EXIT_INPUT
    import pytest

    argv = [str(matrix_abs), "--harness-out", str(out), "-p", "no:cacheprovider", "-q", "-rfEs",
            "-W", "ignore::pytest.PytestAssertRewriteWarning"]
    if not _plugin_autoloaded():
        argv += ["-p", "harness.plugin"]
    if args.targets:
        argv += ["--harness-targets", args.targets]
    argv += ["--harness-resume"] if args.resume else []
    argv += ["--harness-force"] if args.force else []
    if args.k:
        argv += ["-k", args.k]
    if args.device_as:
        argv += ["--harness-device-as", args.device_as]
    if args.wide:
        argv += ["--harness-wide"]
    argv += [flag for on, flag in ((args.static_only, "--harness-static-only"), (args.retune, "--harness-retune"))
             if on]
    if args.winners_from:
        try:
            load_results(Path(args.winners_from))
        except ResultsFileError as exc:
            print(f"harness: --winners-from: {exc}", file=sys.stderr)
            return EXIT_INPUT
        argv += ["--harness-winners-from", str(Path(args.winners_from).resolve())]
    if args.n and args.n != "0":
        argv += ["-n", args.n]
    argv += args.pytest_args
    print(f"harness: matrix {matrix.name} ({matrix_path}), triton {tritoncompat.installed_triton_version()}, "
          f"out {out}", flush=True)
    targets = [t.strip() for t in args.targets.split(",")] if args.targets else list(matrix.targets)
    if any(catalogue()[t].vendor == "amd" for t in targets if t in catalogue()):
        from harness import hiplinker
        from harness.compile import cache_dir

        _, note = hiplinker.provide(tritoncompat.installed_triton_version(), cache_dir() / "tools")
        if note:
            print(f"harness: {note}", flush=True)
    code = int(pytest.main(argv))  # SIGTERM, a scheduler's stop, ends it like Ctrl-C (harness.interrupts)
    if code == 5 and args.resume:
        return EXIT_OK  # nothing was left to run: the resumed run is complete
    return _PYTEST_TO_EXIT.get(code, EXIT_INTERNAL)


def _write_output(path: Path, text: str, option: str) -> bool:
    """Write a report file the user asked for (its folder made); False after a one-line error."""
    from harness.safe_files import write_atomic

    try:
        if path.is_dir():
            raise IsADirectoryError(21, "is a directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        _err(f"{option} {path}: cannot write it: {exc.strerror or exc}")
        return False
    return True


def _load_run(d: str) -> tuple[dict, list] | None:
    """A run directory's (or results.json's) run info and records; None after a one-line error."""
    try:
        return load_results(Path(d))
    except ResultsFileError as exc:
        _err(str(exc))
        return None


def cmd_report(args: argparse.Namespace) -> int:
    loaded = []
    for d in args.dirs:
        found = _load_run(d)
        if found is None:
            return EXIT_INPUT
        run, records = found
        for warning in run.get("read_warnings") or []:
            _err(f"warning: {warning}")
        loaded.append((str(d), run, records))
    first = Path(args.dirs[0])  # a run directory, or its results.json named directly
    out = Path(args.out) if args.out else ((first if first.is_dir() else first.parent) / "report.md"
                                           if len(args.dirs) == 1 else None)
    if out:  # each run's directory as the page links it: relative to where the report goes
        loaded = [(label, {**run, "dir": os.path.relpath(Path(label if Path(label).is_dir() else Path(label).parent),
                                                         out.parent)}, records) for label, run, records in loaded]
    runs, records, conflicts = tables.merge_runs(loaded)
    if conflicts:
        for line in conflicts:
            _err(f"cannot merge: {line}")
        _err("merge runs of one matrix content, or report them separately")
        return EXIT_INPUT
    text = tables.markdown_report(runs, records)
    trends = None
    db = Path(args.history) if args.history else None
    if db is not None:
        from harness import history

        try:
            trends = history.trends(db)
        except history.HistoryError as exc:
            _err(f"warning: {exc}; the report has no trends")
    if out:
        from harness.reports.html_page import html_report

        if not _write_output(out, text, "--out") \
                or not _write_output(out.with_suffix(".html"), html_report(runs, records, trends), "--out"):
            return EXIT_INPUT
    if args.vendor_eval:
        from harness.reports import vendor_eval

        evaluation = vendor_eval.markdown(vendor_eval.evaluate(records))
        if out:
            if not _write_output(out.parent / "vendor-eval.md", evaluation, "--vendor-eval"):
                return EXIT_INPUT
        else:
            print(evaluation)
    if args.csv:
        from harness.reports import csv_export

        if not _write_output(Path(args.csv), csv_export.to_csv(records), "--csv"):
            return EXIT_INPUT
    from harness.reports import terminal

    for _, line in terminal.final_lines(records, args.wide, runs):  # the run's own summary; --wide: the full tables
        print(line)
    if out:
        print(f"\nharness: report written to {out}")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.compare import CompareInputError, compare_runs, render

    try:
        import scipy.stats  # noqa: F401 - the timing family is judged with it
    except ImportError:
        _err("harness compare needs scipy (a dependency of the harness: pip install 'scipy>=1.11')")
        return 3
    try:
        base_run, base = load_results(Path(args.base))
        new_run, new = load_results(Path(args.new))
    except ResultsFileError as exc:
        _err(str(exc))
        return 3
    for warning in (base_run.get("read_warnings") or []) + (new_run.get("read_warnings") or []):
        _err(f"warning: {warning}")
    try:
        thresholds = {k: float(v) for k, v in (new_run.get("compare_thresholds") or {}).items()
                      if isinstance(v, (int, float))}
        noise = None
        if args.history:
            from harness import history

            try:
                noise = history.noise_reader(Path(args.history))
            except history.HistoryError as exc:
                _err(str(exc))
                return 3
        cmp = compare_runs(base, new, threshold=args.threshold, alpha=args.alpha, min_us=args.min_us,
                           normalise=not args.raw, thresholds=thresholds,
                           compile_threshold=args.compile_threshold, base_run=base_run, new_run=new_run,
                           allow_incomplete=args.allow_incomplete, fdr=args.fdr, history=noise,
                           noise_floor=args.noise_floor)
    except CompareInputError as exc:
        for line in str(exc).splitlines():
            _err(line)
        return 3
    print(render.summary(cmp))
    if args.markdown and not _write_output(Path(args.markdown), render.markdown(cmp), "--markdown"):
        return 3
    if args.json:
        import json

        if not _write_output(Path(args.json), json.dumps(render.to_json(cmp), indent=1), "--json"):
            return 3
    return cmp.exit_code


def cmd_history(args: argparse.Namespace) -> int:
    from harness import history

    db = Path(args.db)
    try:
        if args.action == "add":
            for d in args.dirs:
                found = _load_run(d)
                if found is None:
                    return EXIT_INPUT
                print(f"harness: {history.add(db, *found)} figure(s) of {d} stored in {db}")
            return EXIT_OK
        found = history.trends(db, args.k or "", args.threshold, args.hold)
    except history.HistoryError as exc:
        _err(str(exc))
        return EXIT_INPUT
    for t in found:
        if t.step is not None or not args.steps_only:
            print(t.line())
    steps = [t for t in found if t.step is not None]
    print(f"harness: {len(found)} series, {len(steps)} step change(s) (a shift beyond {100 * args.threshold:g}% "
          f"held for the last {args.hold} nights)")
    return EXIT_OK


def _importable_from_here() -> None:
    """``module:ATTR`` sources import from the working directory, as under ``python -m harness``.

    The ``harness`` console script does not put the working directory on ``sys.path``;
    this does, and on ``PYTHONPATH`` for the pytest-xdist and harness worker processes.
    """
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if here not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([here] + [p for p in paths if p])


HANDLERS = {"run": cmd_run, "validate": cmd_validate, "targets": cmd_targets, "report": cmd_report,
            "compare": cmd_compare, "history": cmd_history}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    try:
        args = parser.parse_args(argv)
        args.pytest_args = passthrough
    except SystemExit as exc:  # argparse already printed a one-line usage error
        return EXIT_INPUT if exc.code else EXIT_OK
    _importable_from_here()
    try:
        return int(HANDLERS[args.command](args))
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
