"""The command line's grammar: every command, option and the ranges of its numbers (argparse).

Kept apart from :mod:`harness.cli`, which runs the commands: ``main`` dispatches on ``args.command``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, NoReturn


def stats_floor() -> float:
    from harness.analysis.compare.stats import NOISE_FLOOR

    return NOISE_FLOOR


def _number(low: float, high: float, integer: bool = False, open_low: bool = False) -> Any:
    """An argparse type: a finite number in [low, high] (``open_low``: above low), else argparse's one-line error."""
    import math

    def parse_value(text: str) -> float:
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if integer else 'a number'}") from None
        if not math.isfinite(value) or value > high or value < low or (open_low and value == low):
            raise argparse.ArgumentTypeError(f"{text} is outside {'(' if open_low else '['}{low:g}, {high:g}]")
        return value

    return parse_value


def _workers(text: str) -> str:
    if text == "auto" or (text.isdigit() and int(text) <= 1024):
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: give 'auto' or a number of processes from 0 to 1024")


class _OneLineParser(argparse.ArgumentParser):
    """A usage error is one line naming the command, the argument and the problem (``--help`` shows the usage)."""

    def error(self, message: str) -> NoReturn:
        no_controls = "".join(ch if ch.isprintable() else "?" for ch in message)
        self.exit(2, f"{self.prog}: error: {no_controls} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from harness.analysis import gate

    parser = _OneLineParser(prog="harness", description="Cross-vendor portability harness for Triton kernels")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="compile (and where possible check) every case of a matrix",
        description="Runs every case of MATRIX (YAML). A matrix names each kernel by `source: FILE.py:SPEC` (a "
        "KernelSpec, your @triton.jit function with its shapes and launch; `fn` may be a library's @triton.autotune "
        "object) or by `op: module:function` with `inputs:` (a library's op, captured under each target's virtual "
        "device); a `compiled:` section names functions torch.compile turns into TorchInductor's kernels, each a case "
        "per target where its graph has it. `harness init FILE.py` writes a first matrix; docs/bring-your-kernel.md "
        "has each way.",
    )
    run.add_argument("matrix", nargs="?", help="matrix YAML (default matrices/smoke.yaml of this repository)")
    run.add_argument(
        "--out", help="run directory (default runs/<UTC timestamp>-<random>); refused if it holds another run's records"
    )
    run.add_argument(
        "--resume",
        metavar="DIR",
        help="finish an interrupted run in DIR: its records are kept and only the cases without records run",
    )
    run.add_argument("--force", action="store_true", help="start over in --out even if it holds records")
    run.add_argument("--targets", help="comma-separated targets, replacing the matrix's (e.g. h100,mi300x)")
    run.add_argument("-k", help="pytest -k expression selecting cases by id")
    run.add_argument(
        "--shard",
        help="run only shard I/N of the matrix's cases (1-based), or 'auto': the CI engine's variables say which",
    )
    run.add_argument(
        "--shard-costs",
        metavar="RUN",
        help="balance the shards on what each case took in a stored run (every shard must be given the same one)",
    )
    run.add_argument(
        "-n", default="auto", type=_workers, help="parallel processes (pytest-xdist), 'auto' or 0 (default auto)"
    )
    run.add_argument("--static-only", action="store_true", help="do not run cases on a local GPU")
    run.add_argument("--retune", action="store_true", help="ignore cached autotune winners")
    run.add_argument(
        "--no-reuse",
        action="store_true",
        help="compile and interpret every job even when the harness's result cache holds it unchanged "
        "(also HARNESS_RESULT_CACHE=0)",
    )
    run.add_argument(
        "--wide",
        action="store_true",
        help="print report.md's full tables (one column per target, wide) instead of the summary",
    )
    run.add_argument(
        "--fail-on",
        metavar="KINDS",
        default="",
        help="exit 5 when the run has a config of one of these finding kinds (comma-separated, or any). Without it "
        "a finding is not a failure; the last line counts them. Kinds: " + gate.help_text(),
    )
    run.add_argument(
        "--device-as",
        metavar="TARGETS",
        help="run these targets' cases on the local GPU although it is another model of the same "
        "architecture (e.g. --device-as h100 on an H200 host); recorded in each result",
    )
    run.add_argument(
        "--winners-from",
        metavar="RUN",
        default="",
        help="a stored run (results.json or its directory) whose tuned winners of the other targets are "
        "timed here for the portability column (without it: a proxy, never this host's cache)",
    )
    run.epilog = "Arguments after -- go to pytest as they are, e.g. -- --junitxml=junit.xml"
    lst = sub.add_parser("list", help="print the case ids harness run would run (with the same -k and --targets)")
    lst.add_argument("matrix", nargs="?", help="matrix YAML (default matrices/smoke.yaml of this repository)")
    lst.add_argument("--targets", help="comma-separated targets, replacing the matrix's (e.g. h100,mi300x)")
    lst.add_argument("-k", help="pytest -k expression selecting cases by id")
    lst.add_argument("--shard", help="only shard I/N's cases (1-based), or 'auto', as harness run --shard")
    cmp_ = sub.add_parser(
        "compiled",
        help="capture TorchInductor's kernels for a file's compiled: entries under each target's virtual device, "
        "build every candidate as Inductor does, and say where the kernel graphs differ by vendor",
    )
    cmp_.add_argument("file", help="YAML with name, targets and a compiled: section (docs/bring-your-kernel.md)")
    cmp_.add_argument("--targets", help="comma-separated targets, replacing the file's")
    cmp_.add_argument(
        "--out",
        default="compiled-run",
        help="the run directory (records, report.md, artifacts) with compiled.yaml, compiled.md and compiled.html",
    )
    cmp_.add_argument(
        "-n", default="auto", type=_workers, help="parallel build processes (pytest-xdist), 'auto' or 0 (default auto)"
    )
    val = sub.add_parser("validate", help="check matrix files; prints file:line: message per problem")
    val.add_argument("files", nargs="+", help="matrix YAML files (a kernel file is not one: see harness init)")
    ini = sub.add_parser(
        "init",
        help="write a first matrix for a kernel file (its KernelSpec) or an op (module:function)",
        description="Reads the file as text (never imports it) and writes a matrix naming each KernelSpec of "
        "FILE.py (source: entries), or the op FILE.py:FUNC / module:FUNC (an op: entry, with an inputs module "
        "to complete). Its shape sizes are placeholders: edit them, then harness validate and harness run.",
    )
    ini.add_argument("kernel", help="FILE.py, FILE.py:SPEC, FILE.py:FUNC (an op) or module:FUNC (an op)")
    ini.add_argument("--out", help="the matrix to write (default: the file's stem .yaml here); never overwritten")
    tg = sub.add_parser("targets", help="print the target catalogue")
    tg.add_argument("--sources", action="store_true", help="also print where each number comes from")
    rep = sub.add_parser("report", help="re-render and merge saved results (run directories or results.json)")
    rep.add_argument("dirs", nargs="+")
    rep.add_argument("--out", help="where to write report.md (default: inside the only run directory)")
    rep.add_argument(
        "--csv", metavar="FILE", help="also write every record's figures in long format (one row per record and metric)"
    )
    rep.add_argument(
        "--wide",
        action="store_true",
        help="print report.md's full tables (one column per target, wide) instead of the summary",
    )
    rep.add_argument(
        "--vendor-eval",
        action="store_true",
        help="also write vendor-eval.md beside report.md: each device's tuned winners on the matrix's "
        "shapes, %% of its peak, ratios between devices, vendor-specific winners, what did not fit",
    )
    rep.add_argument(
        "--history",
        metavar="DB",
        default=os.environ.get("HARNESS_HISTORY"),
        help="SQLite history file whose trends report.html shows (default $HARNESS_HISTORY)",
    )
    rep.add_argument(
        "--baseline",
        nargs="+",
        metavar="BASE",
        help="each run's baseline run, in the order of the runs ('-' for none): report.html then opens with what "
        "got worse, better, new and missing since it (the nightly's merge passes the baseline night's runs)",
    )
    rep.add_argument("--against", default="the baseline", help="what --baseline is, as the page names it")
    rep.add_argument(
        "--compare-dir",
        metavar="DIR",
        help="with --baseline: write each run's comparison there (as harness compare --markdown) and verdicts.json "
        "(each run's exit code and its meaning): the one comparison report.html shows, for a merge to gate on",
    )
    rep.add_argument(
        "--fail-on",
        metavar="KINDS",
        default="",
        help="exit 5 when the merged runs have a config of one of these finding kinds, as harness run --fail-on "
        f"({', '.join(gate.KINDS)}; or any): a merge of hosts or shards gates on findings",
    )
    cmp = sub.add_parser(
        "compare",
        help="what changed between two runs (a Triton bump, night to night) and whether it is worse",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 nothing worse; 1 performance regression only (kernel timings, or cold compile "
        "time); 2 a new compile, correctness or limit failure (any worse verdict), or builds the new run's "
        "matrix selected that it does not hold (missing in new); 3 the runs cannot be compared (no common "
        "records, damaged or unreadable results, or a run was interrupted and --allow-incomplete not given)",
    )
    cmp.add_argument("base", help="run directory (or results.json) of the reference run")
    cmp.add_argument("new", help="run directory (or results.json) of the run under test")
    cmp.add_argument(
        "--threshold",
        type=_number(0, 10, open_low=True),
        default=0.05,
        help="relative change of the median that counts as a change (0.05); a kernel's "
        "compare_threshold in the new run's matrix overrides it",
    )
    cmp.add_argument(
        "--fdr",
        type=_number(0, 1, open_low=True),
        default=0.05,
        help="false-discovery rate the timing figures are held to as one family (Benjamini-Hochberg, 0.05)",
    )
    cmp.add_argument(
        "--noise-floor",
        type=_number(0, 1),
        default=stats_floor(),
        help="between-run noise of a timing figure (sigma of the log ratio) assumed where --history "
        f"has fewer than five nights of it ({stats_floor():g}, measured on the H200)",
    )
    cmp.add_argument(
        "--history",
        metavar="DB",
        help="SQLite history file (harness history add): each figure judged against its own "
        "night-to-night noise where it has five nights or more",
    )
    cmp.add_argument(
        "--alpha",
        type=_number(0, 1, open_low=True),
        default=0.001,
        help="significance level of the cold-compile-time sign test (0.001)",
    )
    cmp.add_argument(
        "--min-us", type=_number(0, 1e9), default=20.0, help="configs faster than this are not judged (20 us)"
    )
    cmp.add_argument(
        "--raw", action="store_true", help="judge raw times, not times relative to each run's own baseline measurement"
    )
    cmp.add_argument(
        "--compile-threshold",
        type=_number(0, 100, open_low=True),
        default=0.5,
        help="geometric-mean change of cold compile CPU time (configs cold in both runs, one machine kind) that "
        "counts as a change (0.5: another compile job on the same 2 cores raised it 20-35%%); sign test at --alpha",
    )
    cmp.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="judge an interrupted run's complete cases instead of refusing it (exit 3); what it "
        "leaves out is listed as not compared",
    )
    cmp.add_argument("--markdown", metavar="FILE", help="also write the full table as markdown")
    cmp.add_argument("--json", metavar="FILE", help="also write the machine-readable diff")
    cmp.add_argument(
        "--diffs",
        metavar="DIR",
        help="write each changed binary's TTGIR and PTX / AMDGCN unified diff into DIR (--markdown links them)",
    )
    rpr = sub.add_parser(
        "repro", help="write a standalone Triton script that rebuilds one recorded build and checks its outcome"
    )
    rpr.add_argument("run", help="run directory (or its results.json)")
    rpr.add_argument("case_id", help="the case id, as harness list and the report print it")
    rpr.add_argument("--config", help="the config id, when the case holds several builds")
    rpr.add_argument("--target", help="the target column (e.g. mi300x@async-copy), when the case holds several")
    rpr.add_argument("--out", help="write the script here (default: print it)")
    rpr.add_argument(
        "--launch",
        action="store_true",
        help="also replay the config's recorded check (GPU or CPU interpreter) from inputs saved beside --out "
        "(the default for a recorded mismatch)",
    )
    hist = sub.add_parser("history", help="store nights of results in SQLite; show trends and step changes")
    actions = hist.add_subparsers(dest="action", required=True)
    hist_add = actions.add_parser("add", help="store run directories' figures")
    hist_add.add_argument("dirs", nargs="+", help="run directories to add")
    hist_show = actions.add_parser("show", help="print each series, marking step changes")
    hist_show.add_argument("-k", help="only series whose name contains this text")
    hist_show.add_argument(
        "--threshold", type=_number(0, 10, open_low=True), default=0.05, help="relative shift that counts (0.05)"
    )
    hist_show.add_argument(
        "--hold", type=_number(1, 365, integer=True), default=2, help="nights a shift must last to be a step (2)"
    )
    hist_show.add_argument("--steps-only", action="store_true", help="print only the series with a step")
    for p in (hist_add, hist_show):
        p.add_argument(
            "--db",
            default=os.environ.get("HARNESS_HISTORY", "runs/history.sqlite"),
            help="the SQLite file (default $HARNESS_HISTORY or runs/history.sqlite)",
        )
    return parser
