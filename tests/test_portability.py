"""The portability penalty from a run's own records: another target tuned in the same run, priced whatever the
order its case ran in; a stored run the user named wins; nothing comes from a host's winner cache."""

from __future__ import annotations

from harness.analysis import portability
from harness.model.records import Record
from harness.model.runtime import Runtime


def _timing(us: float) -> dict:
    return {"median_us": us, "samples_us": [us] * 10}


def _compile(target: str, block: int, us: float, stage: str = "final") -> Record:
    return Record(
        kernel="k",
        dtype="fp16",
        shape={"N": 8},
        target=target,
        arch="sm_90",
        vendor="nvidia",
        triton="3.6.0",
        config={"BLOCK": block},
        config_id=f"BLOCK{block}",
        meta={},
        origin="nvidia",
        mode="compile",
        status="ok",
        fits=True,
        kernel_hash="abc",
        case_id=f"case-{target}",
        runtime=Runtime.from_json(
            {
                "status": "ok",
                "stage": stage,
                "timing": _timing(us * 0.95),
                **({"sustained": _timing(us)} if stage != "screen" else {}),
            }
        ),
    )


def _tune(target: str, block: int, recorded: dict | None = None) -> Record:
    return Record(
        kernel="k",
        dtype="fp16",
        shape={"N": 8},
        target=target,
        arch="sm_90",
        vendor="nvidia",
        triton="3.6.0",
        config={"BLOCK": block},
        config_id=f"BLOCK{block}",
        meta={},
        origin="nvidia",
        mode="tune",
        status="ok",
        kernel_hash="abc",
        case_id=f"case-{target}",
        runtime=Runtime.from_json({"median_us": 1.0, "portability": recorded or {}}),
    )


def test_another_target_tuned_in_the_same_run_is_priced_from_the_records() -> None:
    # h200's case: its winner BLOCK1 (100 us sustained), h100's winner BLOCK2 timed here at 130 us
    proxy = {"h100": {"source": "same architecture, no h100 winner known: this device's own best", "slowdown": 1.0}}
    h200 = [_compile("h200", 1, 100.0), _compile("h200", 2, 130.0), _tune("h200", 1, proxy)]
    h100 = [_compile("h100", 1, 110.0), _compile("h100", 2, 105.0), _tune("h100", 2)]
    for records in (h200 + h100, h100 + h200):  # the order the cases ran in does not matter
        got = portability.of(h200[-1], records)["h100"]
        assert got.source == "its winner in this run, timed here" and got.config_id == "BLOCK2"
        assert abs(got.slowdown - 1.3) < 1e-9 and got.timing_method == "sustained"
    assert abs(portability.of(h100[-1], h200 + h100)["h200"].slowdown - 110.0 / 105.0) < 1e-9


def test_a_winner_seen_only_in_the_screen_says_so_and_a_named_stored_run_wins() -> None:
    h200 = [_compile("h200", 1, 100.0), _compile("h200", 2, 120.0, stage="screen")]
    h100 = [_compile("h100", 2, 105.0), _tune("h100", 2)]
    got = portability.of(_tune("h200", 1), h200 + h100)["h100"]
    assert got.timing_method == "isolated (screen: a short timing)" and abs(got.slowdown - 1.2) < 1e-9
    stored = {"h100": {"source": "its winner in the stored run, timed here", "config_id": "BLOCK1", "slowdown": 1.0}}
    assert portability.of(_tune("h200", 1, stored), h200 + h100)["h100"].to_json() == stored["h100"]
