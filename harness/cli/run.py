"""``harness run``: check the matrix and the arguments, then run the cases through pytest and the plugin."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from importlib import metadata
from pathlib import Path

from harness.analysis import gate
from harness.cli.common import (
    _PYTEST_TO_EXIT,
    EXIT_FAILED,
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    default_matrix,
    err,
    shard_ok,
)
from harness.matrix.reading import Matrix, MatrixError, parse
from harness.model.targets import catalogue
from harness.results import rundir
from harness.results.store import ResultsFileError, load_results
from harness.support import tritoncompat


def _plugin_autoloaded() -> bool:
    return any(ep.value.startswith("harness.pytest_plugin") for ep in metadata.entry_points(group="pytest11"))


@contextmanager
def _waiting(what: str) -> Iterator[None]:
    """A phase before the cases run (the matrix read: its modules imported and ops captured in children): said at
    once, and on a terminal redrawn every second with its clock until it ends, so that it never looks hung."""
    if not sys.stdout.isatty():
        print(f"harness: {what} ...", flush=True)
        yield
        return
    from harness.support.ticker import Ticker, clock_text

    start = time.monotonic()

    def draw() -> None:
        sys.stdout.write(f"\r\x1b[Kharness: {what} · {clock_text(time.monotonic() - start)}")
        sys.stdout.flush()

    draw()
    try:
        with Ticker(draw):
            yield
    finally:
        sys.stdout.write("\r\x1b[K")
        sys.stdout.flush()


def read_matrix(matrix_path: Path, targets: str | None, say: bool = False) -> Matrix | None:
    """The matrix a command names, and its ``--targets`` checked; None after printing each problem on a line.
    ``say``: the read is announced at once and its clock kept on a terminal (:func:`_waiting`)."""
    named = [t.strip() for t in targets.split(",")] if targets is not None else None
    if named is not None:
        unknown = [t for t in named if t not in catalogue()]
        if unknown:
            err(f"--targets: unknown target(s) {', '.join(repr(t) for t in unknown)} (known: {', '.join(catalogue())})")
            return None
        if len(set(named)) != len(named):
            err(f"--targets: a target is named twice in {targets!r}")
            return None
    try:
        with _waiting(f"reading {matrix_path}") if say else nullcontext():
            return parse(matrix_path, targets=named)
    except MatrixError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return None


def cmd_run(args: argparse.Namespace) -> int:
    """``harness run``: the facts of user modules this process takes are shared with its xdist workers for the run."""
    from harness.intake import facts
    from harness.support import lifeline

    before = os.environ.get(facts.SHARED_ENV)
    shared = lifeline.new_scratch("facts")  # owned while this run lives: a later command sweeps it if killed
    os.environ[facts.SHARED_ENV] = shared
    try:
        return _run(args)
    finally:
        lifeline.remove_scratch(shared)
        if before is None:
            os.environ.pop(facts.SHARED_ENV, None)
        else:
            os.environ[facts.SHARED_ENV] = before


def _run(args: argparse.Namespace) -> int:
    # every path is made absolute before the matrix is read: a kernel module may chdir when it is imported
    matrix_path = Path(args.matrix) if args.matrix else default_matrix()
    matrix_abs = matrix_path.absolute()
    for name in ("out", "resume", "winners_from"):
        if getattr(args, name):
            setattr(args, name, str(Path(getattr(args, name)).absolute()))
    out = Path(args.resume or args.out) if (args.resume or args.out) else rundir.default_name().absolute()
    try:
        fail_on = gate.parse_kinds(args.fail_on) if args.fail_on else ()
    except ValueError as exc:
        err(str(exc))
        return EXIT_INPUT
    old = tritoncompat.too_old(tritoncompat.installed_triton_version())
    if old:
        err(old)
        return EXIT_INPUT
    refused = _arguments_refused(args)
    if refused:
        err(refused)
        return EXIT_INPUT
    # the run directory is checked, locked and marked before any user code runs or any byte is written there
    try:
        if args.resume and rundir.has_marker(out) and not rundir.has_records(out):
            err(f"harness: {out} holds no finished case yet (stopped before its first record): --resume starts it over")
        held = rundir.hold(out, bool(args.resume), bool(args.force))
    except rundir.RunDirError as exc:
        err(str(exc))
        return EXIT_INPUT
    code = EXIT_INPUT
    try:
        code = _held_run(args, matrix_path, matrix_abs, out, fail_on)
        return code
    finally:
        if code == EXIT_INPUT:
            rundir.abandon(held)
        held.release()


def _arguments_refused(args: argparse.Namespace) -> str:
    """Why the command line's options cannot go together (one line), or ``""``."""
    if args.device_as:
        unknown = [t for t in args.device_as.split(",") if t.strip() not in catalogue()]
        if unknown:
            return f"--device-as: unknown target(s) {', '.join(unknown)} (known: {', '.join(catalogue())})"
    if args.resume and args.out and Path(args.resume) != Path(args.out):
        return "--resume DIR and --out name different directories: --resume alone says where"
    if args.resume and args.force:
        return "--resume keeps a run's records and --force replaces them: choose one"
    return ""


def _held_run(
    args: argparse.Namespace, matrix_path: Path, matrix_abs: Path, out: Path, fail_on: tuple[str, ...]
) -> int:
    """The run, ``out`` held by this command."""
    # a compiled entry's capture that fails keeps its whole traceback in the run directory (its one line says where)
    from harness.intake.inductor.compiled import TRACEBACKS

    os.environ[TRACEBACKS] = str(out / rundir.TRACEBACKS_DIR)
    matrix = read_matrix(matrix_path, args.targets, say=True)
    if matrix is None:
        return EXIT_INPUT
    if args.shard and not shard_ok(args.shard):
        return EXIT_INPUT
    from harness.cli import inner_pytest

    argv = [
        str(matrix_abs),
        "--harness-out",
        str(out),
        "-p",
        "no:cacheprovider",
        "-p",  # it reports objects a test leaves unraisable, which no build leaves, at the price of full collections
        "no:unraisableexception",
        "-p",  # no case takes tmp_path: without it xdist leaves no pytest-of-<user> folder in the temporary one
        "no:tmpdir",
        "--noconftest",  # a conftest.py beside the matrix is the user's code: never imported into the harness
        "-q",
        "-rfE",  # skips are the session's own lines, grouped by reason and wrapped (harness.render.terminal.notes)
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        # the ini of the matrix's folder (a project's own pytest settings) is read, and its options may belong to
        # plugins this session turns off (tmp_path_retention_policy without tmpdir): not the run's concern
        "-W",
        "ignore::pytest.PytestConfigWarning",
        "--harness-progress",
        "-o",
        "console_output_style=classic",
    ]
    if args.targets:
        argv += ["--harness-targets", args.targets]
    argv += ["--harness-resume"] if args.resume else []
    argv += ["--harness-force"] if args.force else []
    if args.k:
        argv += ["-k", args.k]
    if args.shard:
        argv += ["--harness-shard", args.shard]
    if args.shard_costs:
        if not args.shard:
            err("--shard-costs balances shards: give --shard too")
            return EXIT_INPUT
        try:
            load_results(Path(args.shard_costs))
        except ResultsFileError as exc:
            err(f"--shard-costs: {exc}")
            return EXIT_INPUT
        argv += ["--harness-shard-costs", str(Path(args.shard_costs).absolute())]
    if args.device_as:
        argv += ["--harness-device-as", args.device_as]
    if args.wide:
        argv += ["--harness-wide"]
    argv += [
        flag for on, flag in ((args.static_only, "--harness-static-only"), (args.retune, "--harness-retune")) if on
    ]
    if args.winners_from:
        try:
            load_results(Path(args.winners_from))
        except ResultsFileError as exc:
            print(f"harness: --winners-from: {exc}", file=sys.stderr)
            return EXIT_INPUT
        argv += ["--harness-winners-from", str(Path(args.winners_from).resolve())]
    if args.n and args.n != "0":
        argv += ["-n", args.n]
    if args.no_reuse:  # read by the pytest processes (harness.execution.result_cache), xdist's workers included
        os.environ["HARNESS_RESULT_CACHE"] = "0"
    argv += args.pytest_args
    # each path on a line of its own: two paths on one line do not fit an 80-column terminal
    print(f"harness: matrix {matrix.name}, triton {tritoncompat.installed_triton_version()}", flush=True)
    print(f"  {matrix_path}\n  out {out}", flush=True)
    targets = [t.strip() for t in args.targets.split(",")] if args.targets else list(matrix.targets)
    if any(catalogue()[t].vendor == "amd" for t in targets if t in catalogue()):
        from harness.compiling import hiplinker
        from harness.support.cache import cache_dir

        _, note = hiplinker.provide(tritoncompat.installed_triton_version(), cache_dir() / "tools")
        if note:
            print(f"harness: {note}", flush=True)
    code = inner_pytest.main(
        argv
    )  # SIGTERM, a scheduler's stop, ends it like Ctrl-C (harness.pytest_plugin.interrupts)
    if code == 5 and args.resume:
        return _last_line(out, fail_on, EXIT_OK, args)  # nothing was left to run: the resumed run is complete
    if code == 5 and args.shard:  # more shards than this matrix fills: an empty run, so the night's count is whole
        print(f"harness: shard {args.shard} holds no case of this matrix; its run is written empty", flush=True)
        return EXIT_OK
    return _last_line(out, fail_on, _PYTEST_TO_EXIT.get(code, EXIT_INTERNAL), args)


def _last_line(out: Path, fail_on: tuple[str, ...], code: int, args: argparse.Namespace) -> int:
    """After pytest's own last line: the run's configs by finding kind and the exit code, which is
    :data:`EXIT_FINDINGS` where the run would exit 0 but has a config of a kind ``--fail-on`` names. A command that
    runs a run as one of its steps (``harness compiled``: ``args.last_line`` false) says its own last line."""
    from harness.analysis.rows import build_rows
    from harness.render.terminal import findings_line

    if code not in (EXIT_OK, EXIT_FAILED, EXIT_INTERNAL):
        return code  # refused before it ran (bad input, nothing selected): no run of this command to count
    try:
        _, records = load_results(out / "results.json")
    except (OSError, ResultsFileError):
        return code  # no run was written (stopped before it): nothing to count
    counts = gate.count(build_rows(records))
    tripped = gate.tripped(counts, fail_on)
    if tripped and code == EXIT_OK:
        code = EXIT_FINDINGS
    if getattr(args, "last_line", True):
        print(findings_line(counts, fail_on, tripped, code), flush=True)
    return code
