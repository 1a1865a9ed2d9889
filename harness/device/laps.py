"""Where a GPU worker's request spends its seconds, by step: what ``spent_s`` in a reply holds, so a night's GPU
time can be read per phase and step (``benchmarks/run_cost.py breakdown``) rather than guessed from the totals."""

from __future__ import annotations

import time


class Laps:
    """``lap(step)`` adds the time since the last lap (or since it was made) to that step; the request returns
    ``spent`` as its reply's ``spent_s``."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self._clock = time.perf_counter()

    def __call__(self, step: str) -> None:
        now = time.perf_counter()
        self.spent[step] = round(self.spent.get(step, 0.0) + now - self._clock, 3)
        self._clock = now
