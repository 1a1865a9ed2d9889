"""What changed between two runs, record by record: status, verdicts, resources, code, timings, winners.

Records are matched by case × target column × config, ignoring the Triton version, so
a run under pin X compares with a run under pin Y. Static changes need no GPU;
timings are judged only where both runs timed a config in full (see :mod:`.stats`).

Only what both runs completed is judged: a case cut on either side (fewer records than
it produced) and a target without its deciding build are listed as not compared. A build
the new run selected (its ``run["selected"]``) but does not hold is lost work: worse.
A run that was interrupted cannot be compared (exit 3) unless the caller allows it, and
then its missing builds are left out, not called worse.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.analysis import compiled_compare, verdicts
from harness.analysis.compare import compile_time, groups, stats, timings
from harness.analysis.compare.evidence import changed_binary, mix_delta, repro_args, signature
from harness.analysis.compare.inputs import (
    case_of,
    check_timings,
    cut_cases,
    index,
    is_unfinished,
    median,
    selected_keys,
    timed,
)
from harness.model.ids import shape_id
from harness.model.records import Record
from harness.model.run_info import RunInfo

#: resource figures whose change is reported (informational: verdicts decide the exit code)
RESOURCES = (
    "registers",
    "spill_bytes",
    "shared",
    "scratch_bytes",
    "occupancy",
    "mma",
    "wgmma",
    "tcgen05_mma",
    "mfma",
    "ds_ops",
)
VERDICT_RANK = {"fits": 0, "spills": 1, "at risk": 2, "exceeds": 3, "failed": 4}
EXIT_SAME, EXIT_SLOWER, EXIT_WORSE, EXIT_INCOMPARABLE = 0, 1, 2, 3


@dataclass(frozen=True)
class Change:
    kind: str  # "status" | "verdict" | "correctness" | "resource" | "code" | "timing" | "winner"
    label: str  # kernel dtype shape column config
    what: str
    base: Any
    new: Any
    worse: bool = False
    better: bool = False
    detail: str = ""
    repro: str = ""  # the new build as ``harness repro`` names it (case id and config), where one build says it
    member: groups.Member | None = None  # how the grouping sees it (resource and code changes)
    builds: tuple[Record, Record] | None = None  # a code change: the two builds (compare --diffs reads their IR)


@dataclass(frozen=True)
class Comparison:
    """Two runs compared: what matched, what changed and how each timing was judged; made once, read by renderers."""

    matched: int
    only_base: tuple[str, ...] = ()
    only_new: tuple[str, ...] = ()
    missing_in_new: tuple[str, ...] = ()  # builds the new run selected and does not hold
    not_compared: tuple[str, ...] = ()  # cut cases, incomplete verdicts, interrupted runs' gaps
    changes: tuple[Change, ...] = ()
    groups: tuple[groups.Group, ...] = ()  # the resource and code changes, by kind
    timings_judged: int = 0
    judged: tuple[timings.JudgedTiming, ...] = ()  # every timing figure considered
    largest_insignificant: float | None = None  # largest |ratio - 1| among judged timings not called a change
    compile_time: compile_time.CompileTimeJudgement | None = None  # cold lowering time, judged like with like
    reason: str = ""  # why the runs cannot be compared, when they cannot

    @property
    def exit_code(self) -> int:
        if self.reason:
            return EXIT_INCOMPARABLE
        if self.missing_in_new or any(c.worse and c.kind in ("status", "verdict", "correctness") for c in self.changes):
            return EXIT_WORSE
        if any(c.worse and c.kind == "timing" for c in self.changes) or (
            self.compile_time is not None and self.compile_time.worse
        ):
            return EXIT_SLOWER
        return EXIT_SAME


_label = timings.label


def compare_runs(
    base: list[Record],
    new: list[Record],
    threshold: float = 0.05,
    alpha: float = 0.001,
    min_us: float = 20.0,
    normalise: bool = True,
    thresholds: dict[str, float] | None = None,
    compile_threshold: float = 0.5,
    base_run: RunInfo | None = None,
    new_run: RunInfo | None = None,
    allow_incomplete: bool = False,
    fdr: float = 0.05,
    history: Any = None,
    noise_floor: float = stats.NOISE_FLOOR,
) -> Comparison:
    """``thresholds``: per-kernel thresholds (the matrix's ``compare_threshold``), overriding ``threshold``;
    ``alpha``: the compile-time sign test's level; ``fdr``: the false-discovery rate the timing family is held
    to; ``history``: ``(series, method, normalised) -> sigma or None``, the night-to-night noise of a figure;
    ``noise_floor``: the between-run noise assumed without history;
    ``compile_threshold``: the geometric-mean change of cold compile CPU time beyond which it may be called slower;
    ``base_run`` / ``new_run``: the runs' info (interrupted? what did the new one select?);
    ``allow_incomplete``: judge the complete cases of interrupted runs instead of refusing them."""
    check_timings(base, "base")
    check_timings(new, "new")
    moved = compiled_compare.moved_graphs(base, new)
    base, new = _without_graphs(base, {a for a, _ in moved}), _without_graphs(new, {b for _, b in moved})
    cut = cut_cases(base) | cut_cases(new)
    a_all, b_all = index(base, "compile"), index(new, "compile")
    a = {k: r for k, r in a_all.items() if case_of(k) not in cut}
    b = {k: r for k, r in b_all.items() if case_of(k) not in cut}
    matched = sorted(a.keys() & b.keys())
    new_cut = is_unfinished(new_run)
    selected = selected_keys(new_run)
    lost = {k for k in a.keys() - b.keys() if selected is not None and k in selected}
    only_base = tuple(sorted(_label(a[k]) for k in a.keys() - b.keys() - lost))
    only_new = tuple(sorted(_label(b[k]) for k in b.keys() - a.keys()))
    not_compared = sorted(
        f"case cut mid-way: {c[0]} {c[1]} {shape_id(json.loads(c[2]))} {c[3]}"
        + (f"@{c[4]}" if c[4] != "default" else "")
        for c in cut
    )
    not_compared += [
        f"rerun at another shape: {a[0]} {a[1]} {a[2]} -> {b[2]} {b[3]} (compared kernel for kernel as a graph)"
        for a, b in moved
    ]
    missing_in_new: list[str] = []
    if new_cut:
        not_compared += [f"not run (the new run was interrupted): {_label(a[k])}" for k in sorted(lost)]
    else:
        missing_in_new = sorted(_label(a[k]) for k in lost)
    head = Comparison(
        matched=len(matched),
        only_base=only_base,
        only_new=only_new,
        missing_in_new=tuple(missing_in_new),
        not_compared=tuple(not_compared),
    )
    unfinished = [side for side, run in (("base", base_run), ("new", new_run)) if is_unfinished(run)]
    if unfinished and not allow_incomplete:
        reason = (
            f"the {' and '.join(unfinished)} run{'s were' if len(unfinished) > 1 else ' was'} interrupted "
            "before every case ran; `harness run --resume DIR` finishes a run, --allow-incomplete judges "
            "only the cases both runs completed"
        )
        return dataclasses.replace(head, reason=reason)
    if not matched and moved and not (only_base or only_new):  # graphs rerun at other shapes, nothing else
        return dataclasses.replace(head, not_compared=tuple(not_compared))
    if not matched and compiled_compare.graph_keys(base) & compiled_compare.graph_keys(new):
        # the same compiled graphs made otherwise (another mode or torch rewrote every kernel): no build matches,
        # the graphs' comparison answers kernel for kernel
        return dataclasses.replace(head, not_compared=tuple(not_compared))
    if not matched:
        reason = "no record of one run matches a record of the other (different matrices or targets?)"
        return dataclasses.replace(head, reason=reason)
    changes: list[Change] = []
    for key in matched:
        _static(a[key], b[key], changes)
    population: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for key in matched:
        population[b[key].column].append(b[key].config)
    grouped = groups.group([c.member for c in changes if c.member is not None], population)
    cold = compile_time.judge(
        [(a[k], b[k]) for k in matched],
        compile_threshold,
        alpha,
        (base_run.cpu if base_run else None, new_run.cpu if new_run else None),
    )
    _verdict_changes(list(a.values()), list(b.values()), changes, not_compared)
    pairs = [
        (a[k], b[k])
        for k in matched
        if timed(a[k]) and timed(b[k]) and max(median(a[k]) or 0.0, median(b[k]) or 0.0) >= min_us
    ]  # below min_us launch noise dominates
    judged = tuple(timings.judge(pairs, base, new, threshold, fdr, normalise, thresholds or {}, history, noise_floor))
    counted, largest = _timing_changes(judged, changes)
    _winner_changes(base, new, changes)
    return dataclasses.replace(
        head,
        not_compared=tuple(not_compared),
        changes=tuple(changes),
        groups=tuple(grouped),
        timings_judged=counted,
        judged=judged,
        largest_insignificant=largest,
        compile_time=cold,
    )


def _without_graphs(records: list[Record], graphs: set[tuple[str, str, str, str]]) -> list[Record]:
    """The records less those of compiled graphs the comparison leaves to the graphs' (a rerun at another shape)."""
    if not graphs:
        return records
    return [r for r in records if (r.inductor.entry, r.target, r.shape_id, r.dtype) not in graphs]


def _static(ra: Record, rb: Record, out: list[Change]) -> None:
    label = _label(ra)
    if (ra.status == "ok") != (rb.status == "ok"):
        expected = f"expected: {rb.expected_failure}; " if rb.expected_failure else ""
        out.append(
            Change(
                "status",
                label,
                "compile",
                ra.status,
                rb.status,
                worse=rb.status != "ok" and not rb.expected_failure,
                better=rb.status == "ok",
                detail=(expected + (rb.error if rb.status != "ok" else ra.error))[:200],
                repro=repro_args(rb),
            )
        )
    qa, qb = (ra.runtime.status if ra.runtime else None), (rb.runtime.status if rb.runtime else None)
    if qa in ("ok", "mismatch") and qb in ("ok", "mismatch") and qa != qb:
        out.append(Change("correctness", label, "on device", qa, qb, worse=qb == "mismatch", better=qb == "ok"))
    if ra.status == "ok" and rb.status == "ok":
        for name in RESOURCES:
            va, vb = getattr(ra.resources, name), getattr(rb.resources, name)
            if va != vb and (va is not None or vb is not None):
                way = "up" if (vb or 0) > (va or 0) else "down"
                member = groups.Member(f"{name} {way}", rb.column, rb.kernel, rb.config)
                out.append(Change("resource", label, name, va, vb, member=member))
        kind = changed_binary(ra, rb)
        if kind:
            out.append(
                Change(
                    "code",
                    label,
                    kind,
                    ra.artifacts[kind].sha256[:12],
                    rb.artifacts[kind].sha256[:12],
                    detail=mix_delta(ra, rb),
                    repro=repro_args(rb),
                    member=groups.Member(signature(ra, rb), rb.column, rb.kernel, rb.config),
                    builds=(ra, rb),
                )
            )


def _verdict_changes(base: list[Record], new: list[Record], out: list[Change], not_compared: list[str]) -> None:
    """Per (config row, target): the target verdict under Triton's defaults, with at-risk from other environments.
    A target incomplete on either side (no deciding build) is listed in ``not_compared``, never ranked."""

    def by_target(records: list[Record]) -> dict[tuple[str, ...], verdicts.TargetVerdict]:
        rows = verdicts.judge(r for r in records if r.mode == "compile")
        return {(k[0], k[1], k[2], k[3], t): tv for k, row in rows.items() for t, tv in row.targets.items()}

    va, vb = by_target(base), by_target(new)
    for key in sorted(va.keys() & vb.keys()):
        ta, tb = va[key], vb[key]
        if not (ta.complete and tb.complete):
            side = " and ".join(s for s, tv in (("base", ta), ("new", tb)) if not tv.complete)
            rec = next(r for r in (ta.decided_by, tb.decided_by, *ta.others, *tb.others) if r is not None)
            not_compared.append(
                f"verdict incomplete in {side}: {rec.kernel} {rec.dtype} {rec.shape_id} {key[4]} {rec.config_id}"
            )
        elif ta.verdict != tb.verdict:
            rec = tb.decided_by or next(r for r in tb.others if r is not None)
            out.append(
                Change(
                    "verdict",
                    f"{rec.kernel} {rec.dtype} {rec.shape_id} {tb.target} {rec.config_id}",
                    tb.target,
                    ta.verdict,
                    tb.verdict,
                    worse=VERDICT_RANK[tb.verdict] > VERDICT_RANK[ta.verdict],
                    better=VERDICT_RANK[tb.verdict] < VERDICT_RANK[ta.verdict],
                    detail="; ".join(tb.reasons)[:200],
                    repro=repro_args(rec),
                )
            )


def _timing_changes(judged: tuple[timings.JudgedTiming, ...], out: list[Change]) -> tuple[int, float | None]:
    """Each timing called slower or faster, as a change; how many were judged, and the largest |ratio - 1| among
    those that were not called a change."""
    counted, largest = 0, None
    for t in judged:
        j = t.judgement
        if j.verdict == "not judged":
            continue
        counted += 1
        if j.verdict in ("slower", "faster"):
            out.append(
                Change(
                    "timing",
                    t.label,
                    f"median ({t.method})",
                    round(t.base_us, 2),
                    round(t.new_us, 2),
                    worse=j.worse,
                    better=j.verdict == "faster",
                    detail=t.detail(),
                )
            )
        elif math.isfinite(j.ratio) and (largest is None or abs(j.ratio - 1) > largest):
            largest = abs(j.ratio - 1)
    return counted, largest


def _winner_changes(base: list[Record], new: list[Record], out: list[Change]) -> None:
    def cases(records: list[Record]) -> dict[tuple[str, ...], Record]:
        return {(r.kernel, r.dtype, r.shape_id, r.target): r for r in records if r.mode == "tune"}

    wa, wb = cases(base), cases(new)
    for key in sorted(wa.keys() & wb.keys()):
        if wa[key].config_id != wb[key].config_id:
            r = wb[key]
            out.append(
                Change(
                    "winner",
                    f"{r.kernel} {r.dtype} {r.shape_id} {r.target}",
                    "tuned config",
                    wa[key].config_id or wa[key].status,
                    r.config_id or r.status,
                )
            )
