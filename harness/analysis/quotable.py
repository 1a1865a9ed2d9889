"""Figures a report should not quote as they stand, and why: the two causes run CA measured (docs/performance.md).

*Power-capped clocks.* At a chip's power cap each kernel runs at its own SM clock (run CA: our flash attention near
1,830 MHz, cuDNN's SDPA near 1,530 MHz at the same power). A speed-up timed there is a ratio of two times at two
clocks: true of a steady stream at the cap, not of a short burst (``do_bench_cudagraph``), and it moves with the
chip's power state. Read from each sustained timing's NVML trace (``sm_clock_mhz``, ``power_capped``:
:mod:`harness.device.clocks`): both sides mostly capped and their clocks apart by more than ``CLOCK_GAP``.

*Switch lag.* The clock follows a switch between items 50-100 ms late; the rounds run ``SWITCH_MS`` untimed after
each switch so that no timed batch runs at the clock the previous item left. Where that was not enough, an item's
first timed batch of a round still differs from its last in the same direction round after round. Read from the
timing's own samples (``samples_us`` in round order).

Only sustained timings carry either: an isolated figure is one flushed launch after a spin, at whatever clock the
spin left, and says so by its method.
"""

from __future__ import annotations

from harness.model.records import Record
from harness.model.runtime import Timing

CLOCK_GAP = 0.03  # two items' median SM clocks apart by more than this share ...
CAPPED = 0.5  # ... while at least this share of each one's NVML readings had a power-cap reason set
LAG = 0.02  # a round's first timed batch off its last by more than this share ...
LAG_ROUNDS = 0.8  # ... in the same direction in at least this share of the rounds


def clock_gap(winner: Timing, baseline: Timing) -> str:
    """Why a speed-up of these two sustained timings is not a clock-free ratio ('' when it is, or is unknown)."""
    w, b = winner.sm_clock_mhz, baseline.sm_clock_mhz
    if not w or not b or (winner.power_capped or 0) < CAPPED or (baseline.power_capped or 0) < CAPPED:
        return ""
    if abs(w / b - 1) <= CLOCK_GAP:
        return ""
    return f"power-capped clocks: the winner ran at {w:.0f} MHz, the baseline at {b:.0f} MHz"


def switch_lag(t: Timing) -> str:
    """Why a sustained timing still carries the previous item's clock ('' when it does not, or cannot say)."""
    samples, rounds = t.samples_us or (), t.round_medians_us or ()
    if t.method != "sustained" or not rounds or len(samples) % len(rounds) or len(samples) // len(rounds) < 2:
        return ""
    per = len(samples) // len(rounds)
    drift = [
        samples[i * per] / samples[i * per + per - 1] - 1 for i in range(len(rounds)) if samples[i * per + per - 1]
    ]
    if not drift:
        return ""
    for sign in (1, -1):
        if sum(1 for d in drift if sign * d > LAG) >= LAG_ROUNDS * len(drift):
            shift = sorted(drift)[len(drift) // 2]
            return f"switch lag: a round's first timed batch {100 * shift:+.1f}% off its last"
    return ""


def unquotable(records: list[Record]) -> list[str]:
    """Each tuned case's winner figure and speed-up that a report should flag instead of quote, with the reason."""
    out = []
    for r in records:
        rt = r.runtime
        if r.mode != "tune" or r.status != "ok" or rt is None or rt.timing is None or rt.timing_method != "sustained":
            continue
        case = f"{r.kernel} {r.dtype} {r.shape_id} {r.target}"
        lag = switch_lag(rt.timing)
        if lag:
            out.append(f"{case} winner {r.config_id}: {lag}")
        for name, b in (rt.baselines or {}).items():
            if b.sustained is None or b.speedup is None:
                continue
            why = [x for x in (clock_gap(rt.timing, b.sustained), switch_lag(b.sustained)) if x]
            if why:
                out.append(f"{case} speed-up over {name} ({b.speedup:.2f}x): " + "; ".join(why))
    return out
