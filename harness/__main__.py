import os
import signal
import sys


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C while the command line is still being imported (the CLI installs its own handler once loaded):
    nothing has started yet, so the process ends at once (raising here could land inside the import machinery)."""
    os.write(2, b"harness: interrupted\n")
    os._exit(3)


signal.signal(signal.SIGINT, _interrupted)

from harness.cli import main  # noqa: E402 - after the handler: an interrupt during this import is one line

signal.signal(signal.SIGINT, signal.default_int_handler)  # from here main() turns Ctrl-C into its own cleanup
sys.exit(main())
