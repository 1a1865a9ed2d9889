"""A clock that keeps a status line alive: calls a function every second from a daemon thread until stopped.

``harness run`` spends minutes in phases where nothing else reaches the screen (a matrix's modules imported and
its ops captured in children, a long compile): without a tick its line would not change and a newcomer would take
the run for hung. The function is the caller's (it decides what to redraw and holds its own lock)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType


def clock_text(seconds: float) -> str:
    """A status line's clock: ``42s``, ``3m07s``."""
    whole = max(0, int(seconds))
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class Ticker:
    def __init__(self, tick: Callable[[], None], interval: float = 1.0) -> None:
        self._tick = tick
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="harness-ticker", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._tick()
            except (OSError, ValueError):  # a closed terminal or pipe: the run goes on without its clock
                return
            except Exception:  # noqa: BLE001 - a display's tick never ends a run; the next one may draw again
                continue

    def start(self) -> Ticker:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * self._interval)

    def __enter__(self) -> Ticker:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
