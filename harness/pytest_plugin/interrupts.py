"""However many interrupts arrive, a run that was interrupted says so.

The first SIGINT or SIGTERM stops the run the way Ctrl-C does (pytest unwinds, finished
records are kept, results and reports are written). A later one, a second Ctrl-C or a
scheduler that sends SIGTERM twice, is noted and otherwise ignored while pytest unwinds and the
run writes its files: it cannot cut that writing short and leave a run that reads as finished.
(Only a run still going 5 s after an interrupt, one that swallowed it, is interrupted again.) The mark does
not rest on pytest's exit status either (a worker killed by the same Ctrl-C can turn it into
"tests failed"): :attr:`InterruptGuard.interrupted` is what the run records.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from types import FrameType
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class InterruptGuard:
    """Installed in the process that owns a run directory, from the start of the run to its end."""

    def __init__(self) -> None:
        self.count = 0
        self.finishing = False  # set while the run writes its files: nothing interrupts that
        self._raised_at: float | None = None
        self._previous: dict[int, Any] = {}

    @property
    def interrupted(self) -> bool:
        return self.count > 0

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread() or self._previous:
            return
        for sig in _SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)

    def note(self) -> None:
        """An interrupt pytest saw by itself (a KeyboardInterrupt raised before the guard was installed)."""
        self.count = max(self.count, 1)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        now = time.monotonic()
        if not self.finishing and (self._raised_at is None or now - self._raised_at > 5.0):
            self._raised_at = now
            raise KeyboardInterrupt
        print(
            f"harness: {signal.Signals(signum).name} again: already stopping, writing this run's results "
            "(they will say it was interrupted)",
            file=sys.stderr,
            flush=True,
        )

    def uninstall(self) -> None:
        """Restore the handlers there were (after the run's files are written). After an interrupt the process is on
        its way out with the interrupted exit status: a later signal is then ignored, not let through to kill it
        (a scheduler's second SIGTERM a moment after the first would otherwise end the process by that signal,
        its files written and marked, but its exit status not the one a CI job reads)."""
        for sig, previous in self._previous.items():
            signal.signal(sig, signal.SIG_IGN if self.count else previous)
        self._previous = {}
