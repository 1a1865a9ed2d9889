"""``harness`` command line: run, validate, targets, report.

Exit codes (also in docs/usage.md):
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

import errno
import importlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

# Nothing heavy at import: the handlers are imported inside main()'s guard, so a Ctrl-C in the first second of a
# command (while they load) is the one-line "interrupted", not a KeyboardInterrupt traceback.
__all__ = ["main", "build_parser", "_plugin_autoloaded"]


def __getattr__(name: str) -> Any:
    if name == "build_parser":
        from harness.cli.parser import build_parser

        return build_parser
    if name == "_plugin_autoloaded":
        from harness.cli.run import _plugin_autoloaded

        return _plugin_autoloaded
    raise AttributeError(name)


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


#: command -> (module, function) of its handler
HANDLERS = {
    "run": ("harness.cli.run", "cmd_run"),
    "list": ("harness.cli.list_cases", "cmd_list"),
    "validate": ("harness.cli.validate", "cmd_validate"),
    "targets": ("harness.cli.validate", "cmd_targets"),
    "report": ("harness.cli.report", "cmd_report"),
    "compare": ("harness.cli.compare", "cmd_compare"),
    "history": ("harness.cli.history", "cmd_history"),
    "repro": ("harness.cli.repro", "cmd_repro"),
    "init": ("harness.cli.init", "cmd_init"),
    "compiled": ("harness.cli.compiled", "cmd_compiled"),
}


class _CtrlC:
    """Ctrl-C is still Python's ``KeyboardInterrupt``, and is also recorded, because the exception is not always
    what arrives: on CPython 3.11 an interrupt that lands inside ``from X import Y`` can come out as a
    ``TypeError`` ("expected a message argument") or an ``ImportError`` (python/cpython#112660). The command
    line reads the record, not the exception's type. Installed only over Python's own handler, in the main thread:
    a handler the caller installed is left alone, and one the command installs (the run's guard) takes over.
    SIGTERM (a scheduler's stop) is taken the same way where nothing else handles it: before the run's guard is
    installed (a matrix being read, its entries captured) it would otherwise end the process at once, leaving its
    temporary folders and no word."""

    def __init__(self) -> None:
        self.seen = False
        self._previous: Any = None
        self._previous_term: Any = None

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                self._previous = signal.signal(signal.SIGINT, self._handle)
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                self._previous_term = signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        _clear_cpythons_unhandled_mark()
        # unless the command set another since (a run that was interrupted ignores SIGINT while it exits)
        if self._previous is not None and signal.getsignal(signal.SIGINT) == self._handle:
            signal.signal(signal.SIGINT, self._previous)
        if self._previous_term is not None and signal.getsignal(signal.SIGTERM) == self._handle:
            signal.signal(signal.SIGTERM, self._previous_term)


def _clear_cpythons_unhandled_mark() -> None:
    """The command returned (or its interrupt was handled here), so the status it returns is the one to exit with.

    Under ``python -m``, CPython ends the process by SIGINT (status 130 in a shell) whatever it returned once a
    ``KeyboardInterrupt`` has passed through ``exec()`` of a string, even one that was caught: ``exec`` marks it
    unhandled and nothing clears the mark. scipy's array-API layer imports numpy that way, so a Ctrl-C in
    ``harness compare``'s first second often did. 3.10 and 3.11 keep the mark in an exported global, cleared here
    (checked on both); 3.12 on keep it inside the runtime's state, out of reach: there the status may still be 130."""
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (ImportError, ValueError, AttributeError):  # no ctypes, or a Python without that global
        pass


def main(argv: list[str] | None = None) -> int:
    with _CtrlC() as ctrl_c:
        try:
            code = _main(argv)
        except KeyboardInterrupt:
            code = None
        except Exception:
            if not ctrl_c.seen:
                raise
            code = None  # the interrupt, in another exception's clothes
    if code is None or (ctrl_c.seen and code != 0):
        print("harness: interrupted", file=sys.stderr)
        return 3  # EXIT_INTERNAL: interrupted
    return code


def _main(argv: list[str] | None) -> int:
    from harness.cli.common import EXIT_INPUT, EXIT_OK, err
    from harness.cli.parser import build_parser

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
    from harness.support.settings import problems

    wrong = problems()
    if wrong:  # before a matrix is read: a bad timeout is an error, never a silent one second
        err(wrong[0])
        return EXIT_INPUT
    if args.command in ("run", "repro"):
        from harness.support.tritoncompat import clobbered_rocm_triton

        mixed = clobbered_rocm_triton()
        if mixed:
            err(mixed)
            return EXIT_INPUT
    _importable_from_here()
    from harness.support import lifeline

    lifeline.sweep_stale()  # what an earlier command killed with SIGKILL left in the temporary folder
    module, function = HANDLERS[args.command]
    try:
        return int(getattr(importlib.import_module(module), function)(args))
    except OSError as exc:  # a path the system cannot even look up (a 300-character name, a loop of links)
        if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP) and exc.filename:
            name = str(exc.filename)
            err(f"{name if len(name) <= 120 else name[:100] + '...'}: {exc.strerror}: choose a shorter or plain path")
            return EXIT_INPUT
        raise
