"""What two runs must be before they are compared, and what each holds: its records by key, its timed medians (a
NaN, zero or missing median is refused naming the record), the cases a kill cut short, the builds its matrix
selected, and whether it finished."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from harness.analysis.compare.timings import label
from harness.model.ids import config_key
from harness.model.kernel_refs import graph_identity
from harness.model.records import Record
from harness.model.run_info import RunInfo, Selection
from harness.model.runtime import Timing
from harness.results.store import complete_cases


class CompareInputError(Exception):
    """A timed record whose median cannot be compared; ``str()`` names each one."""


def identity(r: Record) -> tuple[str, ...]:
    """What matches a record of one run with one of another: its merge key (less Triton and mode), where a kernel
    Inductor generated is named by its place in its graph (:func:`harness.model.kernel_refs.graph_identity`), not by
    Inductor's running number, which moves when a kernel is added before it."""
    key = r.key()[:-2]
    graph, position = r.inductor.graph, r.inductor.position
    if r.inductor.entry is None or not graph or position is None or not 0 < position <= len(graph):
        return key
    return (f"{r.inductor.entry}.{graph_identity(tuple(graph), position)}", *key[1:])


def index(records: list[Record], mode: str) -> dict[tuple[str, ...], Record]:
    return {identity(r): r for r in records if r.mode == mode}


def median(r: Record) -> float | None:
    timing = r.runtime.timing if r.runtime is not None else None
    value = timing.median_us if timing is not None else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def timed(r: Record) -> bool:
    """Timed in full on a device (a config seen only in the tuner's short screen is not judged)."""
    return r.runtime is not None and r.runtime.ok and not r.runtime.screened and isinstance(r.runtime.timing, Timing)


def check_timings(records: list[Record], side: str) -> None:
    """Refuse timed records whose median is NaN, zero, negative or missing, naming each."""
    bad = []
    for r in records:
        if r.mode == "compile" and timed(r) and median(r) is None:
            value = (r.runtime.timing if r.runtime and r.runtime.timing else Timing()).median_us
            bad.append(f"{side}: {label(r)}: timed 'ok' but its median is {value!r}")
        elif (
            r.mode == "compile"
            and r.runtime is not None
            and r.runtime.ok
            and not r.runtime.screened
            and not isinstance(r.runtime.timing, Timing)
        ):
            bad.append(f"{side}: {label(r)}: timed 'ok' but its median is 'missing'")
    if bad:
        raise CompareInputError("\n".join(bad))


def case_of(key: tuple[str, ...]) -> tuple[str, ...]:
    """A build's case, Triton-agnostic: kernel, dtype, shape, target, environment."""
    return key[:5]


def cut_cases(records: list[Record]) -> set[tuple[str, ...]]:
    """Cases with fewer records than they produced (a kill cut their batch)."""
    done, _ = complete_cases(records)
    return {case_of(identity(r)) for r in records if r.case_id and r.case_id not in done}


def selected_keys(run: RunInfo | None) -> set[tuple[str, ...]] | None:
    """The build keys a run's matrix selected, or None where the run does not record them (older harness)."""
    entries = run.selected if run is not None else None
    if not entries:
        return None
    keys: set[tuple[str, ...]] = set()
    for i, e in enumerate(entries if isinstance(entries, tuple) else [entries]):
        if not (
            isinstance(e, Selection)
            and all(isinstance(getattr(e, k), str) for k in ("kernel", "dtype", "target", "environment"))
            and isinstance(e.shape, Mapping)
            and isinstance(e.configs, tuple)
            and all(isinstance(c, Mapping) for c in e.configs)
        ):
            shown = e.to_json() if isinstance(e, Selection) else e
            raise CompareInputError(
                f"new: run.selected[{i}] is not {{kernel, dtype, shape, target, environment, configs}}: "
                f"{str(shown)[:120]}"
            )
        keys |= {
            (
                str(e.kernel),
                str(e.dtype),
                json.dumps(e.shape, sort_keys=True),
                str(e.target),
                str(e.environment),
                config_key(dict(c)),
            )
            for c in e.configs
        }
    return keys


def is_unfinished(run: RunInfo | None) -> bool:
    return run is not None and bool(run) and run.unfinished
