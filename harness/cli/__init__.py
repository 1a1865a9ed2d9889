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

import os
import sys

from harness.cli.common import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, err
from harness.cli.compare import cmd_compare
from harness.cli.history import cmd_history
from harness.cli.list_cases import cmd_list
from harness.cli.parser import build_parser
from harness.cli.report import cmd_report
from harness.cli.repro import cmd_repro
from harness.cli.run import _plugin_autoloaded, cmd_run
from harness.cli.validate import cmd_targets, cmd_validate

__all__ = ["main", "build_parser", "_plugin_autoloaded"]


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


HANDLERS = {
    "run": cmd_run,
    "list": cmd_list,
    "validate": cmd_validate,
    "targets": cmd_targets,
    "report": cmd_report,
    "compare": cmd_compare,
    "history": cmd_history,
    "repro": cmd_repro,
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    try:
        args = parser.parse_args(argv)
        args.pytest_args = passthrough
    except SystemExit as exc:  # argparse already printed a one-line usage error
        return EXIT_INPUT if exc.code else EXIT_OK
    _importable_from_here()
    try:
        return int(HANDLERS[args.command](args))
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERNAL
