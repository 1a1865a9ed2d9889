"""Figures flagged instead of quoted (harness/analysis/quotable.py), on a stored H200 run's tune records.

The stored run (tests/data/h200_gate/g3) predates the NVML trace, so its figures carry no clocks and nothing is
flagged; the tests give one tune record the clocks run CA measured at the H200's power cap (our flash attention
near 1,830 MHz, SDPA near 1,530 MHz) and check the figure is flagged where people read, and that the same
record with one clock for both, or off the cap, is not.
"""

from __future__ import annotations

import dataclasses

from helpers import DATA

from harness.analysis import quotable
from harness.analysis.findings import analyse
from harness.model.records import Record
from harness.render import report_md, terminal
from harness.results.store import load_results

RUN, RECORDS = load_results(DATA / "h200_gate" / "g3")


def _tuned() -> Record:
    return next(
        r
        for r in RECORDS
        if r.mode == "tune" and r.status == "ok" and r.runtime and r.runtime.timing_method == "sustained"
        and any(b.sustained is not None for b in (r.runtime.baselines or {}).values())
    )  # fmt: skip


def _clocked(rec: Record, winner_mhz: float, baseline_mhz: float, capped: float) -> Record:
    rt = rec.runtime
    assert rt is not None and rt.timing is not None
    bases = {
        n: b.updated(sustained=b.sustained.updated(sm_clock_mhz=baseline_mhz, power_capped=capped))
        if b.sustained is not None
        else b
        for n, b in (rt.baselines or {}).items()
    }
    timing = rt.timing.updated(sm_clock_mhz=winner_mhz, power_capped=capped)
    return dataclasses.replace(rec, runtime=rt.updated(timing=timing, baselines=bases))


def test_a_stored_run_without_clocks_flags_nothing() -> None:
    assert quotable.unquotable(list(RECORDS)) == []


def test_a_speedup_between_two_capped_clocks_is_flagged_in_every_view() -> None:
    rec = _tuned()
    records = [_clocked(rec, 1830.0, 1530.0, 1.0) if r is rec else r for r in RECORDS]
    flagged = quotable.unquotable(records)
    assert flagged and all(
        "power-capped clocks: the winner ran at 1830 MHz, the baseline at 1530 MHz" in f for f in flagged
    )
    found = analyse([RUN], records)
    assert found.unquotable == tuple(flagged)
    assert any("WARNING not to be quoted" in line for _, line in terminal.final_lines(found, width=120))
    assert "Not to be quoted as they stand" in report_md.markdown_report(found)


def test_one_clock_or_no_cap_is_quoted() -> None:
    rec = _tuned()
    assert quotable.unquotable([_clocked(rec, 1830.0, 1820.0, 1.0)]) == []  # within CLOCK_GAP
    assert quotable.unquotable([_clocked(rec, 1830.0, 1530.0, 0.1)]) == []  # not at the power cap


def test_a_round_that_starts_at_the_previous_items_clock_is_switch_lag() -> None:
    rec = _tuned()
    t = rec.runtime.timing  # type: ignore[union-attr]
    rounds = len(t.round_medians_us)
    per = len(t.samples_us) // rounds
    lagging = [(1.06 if i % per == 0 else 1.0) * 100.0 for i in range(rounds * per)]  # each round's first batch slow
    slow_first = t.updated(samples_us=tuple(lagging))
    assert quotable.switch_lag(slow_first).startswith("switch lag: a round's first timed batch +6.0% off its last")
    assert quotable.switch_lag(t.updated(samples_us=tuple([100.0] * (rounds * per)))) == ""
