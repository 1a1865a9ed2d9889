"""A run, or a merge of runs, analysed once: what every view shows is decided here, and every renderer (terminal,
report.md, report.html, vendor-eval.md, CSV) takes these findings and only formats them.

Decided once: each config row's verdicts (:mod:`harness.analysis.rows`), the roof each tuned figure is held
against (:mod:`harness.analysis.roofline`), the measured figures per case and device, the vendor evaluation, the
comparison between the Triton versions a merge holds, the timings too spread out to support a gate, and the
trends of a history file when one is given. The records themselves stay as they were read: a renderer reads their
stored fields (resources, errors, timings) to show them, never to decide anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.analysis import adaptation, figures, gate, inductor_graphs, portability, quotable, stability, versions
from harness.analysis.compare import Comparison
from harness.analysis.figures import Measured
from harness.analysis.overview import Overview, overview
from harness.analysis.roofline import Roof, roof_of
from harness.analysis.roofline_chart import DeviceRoofline, rooflines
from harness.analysis.rows import Row, build_rows
from harness.analysis.trends import Trend
from harness.analysis.vendor_eval import CaseEval, evaluate
from harness.model.records import Record
from harness.model.run_info import RunInfo
from harness.model.runtime import NOT_THIS_MODEL, PortabilityEntry


@dataclass(frozen=True)
class Findings:
    runs: tuple[RunInfo, ...]  # each run's provenance
    records: tuple[Record, ...]
    rows: tuple[Row, ...]
    roofs: Mapping[int, Roof]  # id(record) -> the roof of a tuned figure (the records are held here, ids stay theirs)
    penalties: Mapping[int, dict[str, PortabilityEntry]]  # id(tune record) -> other targets' winners priced here
    measured: tuple[Measured, ...]
    evaluations: tuple[CaseEval, ...]
    between_versions: tuple[tuple[str, str, Comparison], ...]
    unstable: tuple[str, ...]
    incomplete: int  # (config row, target) verdicts without their deciding build
    trends: tuple[Trend, ...] | None  # None: no history file was given
    overview: Overview  # report.html's first screen: configs by verdict per kernel x target, the worst findings
    rooflines: tuple[DeviceRoofline, ...]  # per device: tuned winners and baselines against its roofs
    launches: tuple[adaptation.Launches, ...] = ()  # captured ops: each target's launches (the library adapts?)
    compiled: tuple[inductor_graphs.Adaptation, ...] = ()  # compiled entries: each target's Inductor kernel graph
    policies: tuple[str, ...] = ()  # what stood in for a GPU's timing in those graphs (harness.model.inductor_policies)
    unquotable: tuple[str, ...] = ()  # winner figures and speed-ups flagged, with why (harness.analysis.quotable)
    unchecked: tuple[tuple[str, int], ...] = ()  # why configs went unchecked, with how many (harness.analysis.gate)
    #: why a target's cases did not run on this host's GPU (another model of the same architecture: what
    #: ``--device-as`` would do), with how many builds each
    not_on_this_gpu: tuple[tuple[str, int], ...] = ()

    def penalty(self, r: Record) -> dict[str, PortabilityEntry]:
        """The tuning-portability entries of a tune record (:func:`harness.analysis.portability.of`)."""
        return self.penalties.get(id(r), {})

    def roof(self, r: Record) -> Roof | None:
        """The roof a tune record's winner is held against (None for every other record, or without a model)."""
        return self.roofs.get(id(r))


def analyse(runs: Sequence[RunInfo], records: Sequence[Record], trends: Sequence[Trend] | None = None) -> Findings:
    """Everything the views need from these records, computed once."""
    held = list(records)
    rows = build_rows(held)
    measured = figures.measured(held)
    roofs = {id(r): roof for r in held if (roof := roof_of(r)) is not None}
    return Findings(
        runs=tuple(runs),
        records=tuple(held),
        rows=tuple(rows),
        roofs=roofs,
        penalties={id(r): portability.of(r, held) for r in held if r.mode == "tune"},
        measured=tuple(measured),
        evaluations=tuple(evaluate(held, rows)),
        between_versions=tuple(versions.between_versions(held)),
        unstable=tuple(stability.unstable_timings(held)),
        incomplete=sum(1 for row in rows for tv in row.judged.targets.values() if not tv.complete),
        trends=tuple(trends) if trends is not None else None,
        overview=overview(rows),
        rooflines=tuple(rooflines(measured)),
        launches=tuple(adaptation.of(held)),
        compiled=tuple(inductor_graphs.of_records(held)),
        policies=inductor_graphs.policies_of(held),
        unquotable=tuple(quotable.unquotable(held)),
        unchecked=gate.unchecked(rows),
        not_on_this_gpu=_not_on_this_gpu(held),
    )


def _not_on_this_gpu(records: Sequence[Record]) -> tuple[tuple[str, int], ...]:
    """The reasons builds were not launched because the local GPU is another model than their target's."""
    said: dict[str, int] = {}
    for r in records:
        reason = r.runtime.reason if r.runtime is not None and r.runtime.status == "not_launched" else None
        if reason and reason.startswith(NOT_THIS_MODEL):
            said[reason] = said.get(reason, 0) + 1
    return tuple(said.items())
