"""One status line while a run goes: cases done of all, elapsed and an estimate of what is left (never cut off:
they come first), builds per target column, GPU cases, what is running. On a terminal the line is redrawn in place
at least every second (a clock ticks while a long case runs) and at most a few times a second; in a log (CI) a line
is written at each tenth of the cases, and after a minute without one, so a log stays short and never looks hung.
Never wider than :data:`WIDTH` columns (nor the terminal): where the columns do not fit, the builds are summed,
then what is running is left out. It lives in the pytest controller and only counts what reports say.

Above it, each kernel's verdict line as soon as every build the run selected of that kernel is in (the line the
run's summary ends with, decided by the same analysis over those builds): the first answer comes seconds into a
run, not at its end."""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.model.records import Record
from harness.model.run_info import Selection
from harness.render.glance import wrap_parts
from harness.support.ticker import clock_text

WIDTH = 100
REDRAW_S = 0.25  # a terminal's line is redrawn at most this often
TICK_S = 1.0  # ... and at least this often (its clock)
LOG_STEPS = 10  # a log gets a line at each tenth of the cases
LOG_QUIET_S = 60.0  # ... and one after this long without a line


def _column(target: str, environment: str) -> str:
    return target if environment == "default" else f"{target}@{environment}"


@dataclass
class Progress:
    """What the line says, counted from the reports as they arrive (mutable: it is the display's own state)."""

    write: Callable[[str], None]  # the terminal reporter's writer (what pytest itself prints through)
    tty: bool
    width: int = WIDTH
    clock: Callable[[], float] = time.monotonic
    cases_total: int = 0
    cases_done: int = 0
    builds_total: Counter[str] = field(default_factory=Counter)
    builds_done: Counter[str] = field(default_factory=Counter)
    gpu_done: int = 0
    failed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # case time by kind: builds, interpreter
    gpu_cases: list[tuple[float, float, float]] = field(
        default_factory=list
    )  # per tuned case: configs, baselines, sustained
    compiles: Counter[str] = field(default_factory=Counter)  # "cold", "cached" (Triton's cache), "reused" (ours)
    running: list[str] = field(default_factory=list)
    kernel_builds: Counter[str] = field(default_factory=Counter)  # per kernel: the builds the run selected ...
    kernel_records: dict[str, list[Record]] = field(default_factory=dict)  # ... and those in so far
    started: float = -1.0  # when the cases were collected (-1: still collecting)
    opened: float = field(default=-1.0)  # when the session started: the clock before the cases are known
    _drawn: float = -1.0
    _logged: float = -1.0
    _logged_step: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.opened < 0:
            self.opened = self.clock()

    def _emit(self, text: str) -> None:
        """Every write of the line goes through here: the ticker's thread and pytest's hooks never interleave."""
        with self._lock:
            self.write(text)

    def start(self, cases_total: int, selected: Iterable[Selection]) -> None:
        self.started = self.clock()
        self.cases_total = cases_total
        for s in selected:
            self.builds_total[_column(str(s.target), str(s.environment))] += len(s.configs or ())
            if s.kernel:
                self.kernel_builds[s.kernel] += len(s.configs or ())
        self.width = min(WIDTH, self.width)
        self.draw(force=True)

    def tick(self) -> None:
        """Called every second (:class:`harness.support.ticker.Ticker`): a terminal's line is redrawn so its clock
        moves; a log gets the line when it has had none for :data:`LOG_QUIET_S`."""
        now = self.clock()
        due = now - self._drawn >= TICK_S if self.tty else self.started >= 0 and now - self._logged >= LOG_QUIET_S
        if due:
            try:
                self.draw(force=True)
            except RuntimeError:  # a count changed size under the read (pytest's thread adds a column): next tick
                pass

    def case_started(self, name: str) -> None:
        self.running.append(name)
        self.draw()

    def records(self, records: Iterable[Record]) -> None:
        """A case's records, as its call report brings them."""
        for r in records:
            if r.mode == "compile":
                self.builds_done[r.column] += 1
                self._kernel_build(r)
                if r.compile_cache in ("miss", "hit", "harness"):
                    self.compiles[{"miss": "cold", "hit": "cached", "harness": "reused"}[r.compile_cache]] += 1
            elif r.mode == "tune":
                self.gpu_done += 1
                phases = r.runtime.phases_s if r.runtime else None
                if phases is not None:
                    self.gpu_cases.append(
                        (float(phases.configs or 0), float(phases.baselines or 0), float(phases.sustained or 0))
                    )

    def _kernel_build(self, r: Record) -> None:
        """Count a kernel's build; once all it selected are in, say its verdict line above the status line."""
        if not self.kernel_builds[r.kernel]:
            return
        held = self.kernel_records.setdefault(r.kernel, [])
        held.append(r)
        if len(held) == self.kernel_builds[r.kernel]:
            from harness.analysis.findings import analyse
            from harness.render.terminal import kernel_lines

            for line in kernel_lines(analyse((), held), width=1 << 16):  # wrapped here, not cut
                text = "harness: " + line.strip()
                if len(text) > self.width and " " not in line.strip():  # a kernel name alone (Inductor's): indented
                    text = "  " + line.strip()
                self.say(text)

    def say(self, text: str) -> None:
        """A line of its own above the status line (which a terminal gets redrawn under it), wrapped at its
        `` · `` separators to the width, never cut."""
        self._emit(("\r\x1b[K" if self.tty else "") + "\n".join(wrap_parts(text, self.width)) + "\n")
        if self.tty:
            self.draw(force=True)

    def timed(self, kind: str, seconds: float) -> None:
        """A case's call took ``seconds`` (``kind``: builds or interpreter): where the run's time went."""
        self.seconds[kind] = self.seconds.get(kind, 0.0) + seconds

    def case_done(self, name: str, failed: bool) -> None:
        if name in self.running:
            self.running.remove(name)
        self.cases_done += 1
        self.failed += 1 if failed else 0
        self.draw()

    def line(self) -> str:
        if self.started < 0:  # the cases are still being collected (specs loaded, callbacks asked, workers started)
            return f"harness: collecting the cases · {clock_text(self.clock() - self.opened)}"
        elapsed = self.clock() - self.started
        done, total = sum(self.builds_done.values()), sum(self.builds_total.values())
        # what is left, by the builds when there are any (a case of 30 configs is not a case of one)
        if 0 < done < total:
            fraction = done / total
        else:  # no build in yet, or only cases without builds left (interpreter checks, GPU phases)
            fraction = self.cases_done / self.cases_total if self.cases_total else 0.0
        left = f", ~{clock_text(elapsed / fraction * (1 - fraction))} left" if 0 < fraction < 1 else ""
        head = [f"harness: {self.cases_done}/{self.cases_total} cases", f"{clock_text(elapsed)}{left}"]
        extra = [f"gpu {self.gpu_done} done"] if self.gpu_done else []
        extra += [f"{self.failed} failed"] if self.failed else []
        per_column = " ".join(f"{c} {self.builds_done[c]}/{n}" for c, n in sorted(self.builds_total.items()))
        text = ""
        for builds in ([f"builds {per_column}"], [f"builds {done}/{total}"], []):  # the columns, else their sum
            text = " · ".join(head + (builds if total else []) + extra)
            if len(text) <= self.width:
                break
        if self.running and self.tty:  # what is running, cut at the end if it must be: the rest stays whole
            with_now = f"{text} · now {self.running[-1]}"
            if len(with_now) <= self.width:
                return with_now
            if self.width - len(text) >= 16:
                return with_now[: self.width - 1] + "…"
        return text if len(text) <= self.width else text[: self.width - 1] + "…"

    def draw(self, force: bool = False) -> None:
        now = self.clock()
        if self.tty:
            if force or now - self._drawn >= REDRAW_S or self.cases_done == self.cases_total:
                self._drawn = now
                self._emit("\r\x1b[K" + self.line())
            return
        if self.started < 0:
            return  # a log says the run's first line itself (harness.cli.run)
        step = LOG_STEPS * self.cases_done // self.cases_total if self.cases_total else LOG_STEPS
        if force or step > self._logged_step:
            self._logged_step, self._logged = max(step, self._logged_step), now
            self._emit(self.line() + "\n")

    def breakdown(self) -> list[str]:
        """Where the run's time went: wall time, case time by kind (summed over the workers) and how many builds were
        compiled or came from Triton's cache; on a GPU run a second line with the GPU phases (time holding the GPU:
        the configs' checks and timings, the baselines', the interleaved rounds of both), their per-case medians
        and how many cases spent less on their baselines than on their configs."""
        wall = self.clock() - self.started
        kinds = ", ".join(f"{k} {clock_text(v)}" for k, v in sorted(self.seconds.items()))
        parts = [f"harness: {self.cases_done} cases in {clock_text(wall)}", f"case time {kinds or 'none'}"]
        if self.compiles:
            counts = ", ".join(f"{self.compiles[k]} {k}" for k in ("cold", "cached", "reused") if self.compiles[k])
            parts.append(f"compiles {counts}")
        lines = [" · ".join(parts)]
        if self.gpu_done:
            n = len(self.gpu_cases)
            cols = list(zip(*self.gpu_cases)) if n else [(), (), ()]
            total = sum(sum(c) for c in self.gpu_cases)
            median = [f"{statistics.median(c):.1f}s" if c else "-" for c in cols]
            cheaper = sum(1 for c, b, _ in self.gpu_cases if b <= c)
            lines.append(
                f"harness GPU: {self.gpu_done} cases held it {clock_text(total)} (configs {clock_text(sum(cols[0]))}, "
                f"baselines {clock_text(sum(cols[1]))}, sustained {clock_text(sum(cols[2]))})"
            )
            lines.append(
                f"  per case: median configs {median[0]}, baselines {median[1]}, sustained {median[2]};"
                f" baselines <= configs in {cheaper}/{n}"
            )
        return [part for line in lines for part in wrap_parts(line, self.width)]

    def finish(self) -> None:
        """End the terminal's line, so what pytest prints next starts on its own line."""
        if self.tty:
            self._drawn = float("inf")  # a tick after this would draw the line again under pytest's summary
            self._emit("\r\x1b[K" + self.line() + "\n")
