"""The vendor evaluation: the same kernels, tuned separately on each device, on the user's shapes.

Per case: each device's tuned winner, its rate and share of that device's peak, the time ratio
between devices, whether each winner is vendor-specific (its config does not fit the other vendor's
targets), how many configs fit one vendor only, and what did not fit where (exceeds / failed builds
per target). Targets without a device
in the runs are listed as static only. Rendered by :mod:`harness.render.vendor_eval` (``harness report --vendor-eval``)
and as a section of report.html.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from harness.analysis.figures import Measured, by_case, measured
from harness.analysis.rows import Row, build_rows
from harness.model.records import Record


@dataclass(frozen=True)
class CaseEval:
    kernel: str
    dtype: str
    shape_id: str
    triton: str
    devices: tuple[Measured, ...]  # one per target that ran on a device
    static_only: tuple[str, ...]  # targets compiled but never run here
    winner_fits_elsewhere: dict[str, str]  # target -> "fits everywhere" / "does not fit mi300x (...)"
    not_fitting: dict[str, int]  # target -> configs that exceed or failed
    one_vendor: dict[str, int]  # "NVIDIA only" / "AMD only" -> configs that fit that vendor alone
    per_target: dict[str, str] = field(default_factory=dict)  # what a static run can say per target (static_lines)

    def cells(self) -> dict[str, list[str]]:
        """The row as plain text, one list of lines per column (each renderer escapes them its own way)."""
        return {
            "device": [
                f"{m.target} ({m.gpu}): {m.config_id}, {m.median_us:.1f} µs {m.method}, {m.roof.label}"
                for m in self.devices
            ]
            or ["not run on a GPU"],
            "between": [" · ".join(self.ratio_lines()) or "—"],
            "elsewhere": [f"{t}: {v}" for t, v in self.winner_fits_elsewhere.items()] or ["—"],
            "one_vendor": [", ".join(f"{k} {n}" for k, n in self.one_vendor.items()) or "—"],
            "static_only": [", ".join(self.static_only) or "—"],
            "not_fitting": [", ".join(f"{t} {n}" for t, n in self.not_fitting.items())],
        }

    def static_cells(self) -> dict[str, list[str]]:
        """The row as a static run can fill it: per target, how many configs fit and their resources; the configs
        one vendor only takes; those that do not fit."""
        return {
            "per_target": [f"{t}: {text}" for t, text in self.per_target.items()] or ["—"],
            "one_vendor": [", ".join(f"{k} {n}" for k, n in self.one_vendor.items()) or "—"],
            "not_fitting": [", ".join(f"{t} {n}" for t, n in self.not_fitting.items())],
        }

    def ratio_lines(self) -> list[str]:
        """Time ratios between devices, the fastest first: ``h200 1.00× · mi300x 1.31× slower``."""
        if len(self.devices) < 2:
            return []
        fastest = min(self.devices, key=lambda m: m.median_us)
        return [
            f"{m.target} {m.median_us / fastest.median_us:.2f}×"
            for m in sorted(self.devices, key=lambda m: m.median_us)
        ]


def evaluate(records: list[Record], rows: list[Row] | None = None) -> list[CaseEval]:
    """``rows``: the records' verdict rows when the caller has built them already."""
    rows = build_rows(records) if rows is None else rows
    verdict_of: dict[tuple[str, str, str, str, str], dict[str, str]] = {}
    not_fitting: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    targets_of: dict[tuple[str, str, str, str], set[str]] = defaultdict(set)
    one_vendor: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    builds: dict[tuple[str, str, str, str], dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        case = (row.kernel, row.dtype, row.shape_id, row.triton)
        if row.judged.category.endswith(" only") and not row.judged.duplicate:
            one_vendor[case][row.judged.category] += 1
        verdict_of[case + (row.config_id,)] = {t: tv.verdict for t, tv in row.judged.targets.items()}
        for t, tv in row.judged.targets.items():
            targets_of[case].add(t)
            if tv.verdict in ("exceeds", "failed") and not tv.duplicate_of:
                not_fitting[case][t] += 1
            if tv.decided_by is not None and not tv.duplicate_of:
                builds[case][t].append(tv.decided_by)
    ran = by_case(measured(records))
    out = []
    for case in sorted(targets_of):
        kernel, dtype, shape_id, triton = case
        devices = tuple(m for m in ran.get((kernel, dtype, shape_id), []) if m.triton == triton)
        fits_elsewhere = {}
        for m in devices:
            verdicts = verdict_of.get(case + (m.config_id,), {})
            bad = sorted(t for t, v in verdicts.items() if v in ("exceeds", "failed") and t != m.target)
            fits_elsewhere[m.target] = "fits every target" if not bad else "vendor-specific: not on " + ", ".join(bad)
        out.append(
            CaseEval(
                kernel,
                dtype,
                shape_id,
                triton,
                devices,
                tuple(sorted(targets_of[case] - {m.target for m in devices})),
                fits_elsewhere,
                {t: not_fitting[case][t] for t in sorted(targets_of[case])},
                dict(sorted(one_vendor[case].items())),
                {t: _static_line(builds[case][t]) for t in sorted(builds[case])},
            )
        )
    return out


def _static_line(built: list[Record]) -> str:
    """``9 of 12 fit; regs median 128 (max 255); smem max 98304 B; 2 spill`` for one target's configs of a case."""
    ok = [r for r in built if r.status == "ok"]
    fit = sum(1 for r in ok if r.fits)
    regs = sorted(r.resources.registers for r in ok if r.resources.registers is not None)
    smem = [r.resources.shared for r in ok if r.resources.shared is not None]
    spill = sum(1 for r in ok if (r.resources.spill_bytes or 0) > 0)
    parts = [f"{fit} of {len(built)} fit"]
    if regs:
        parts.append(f"regs median {regs[len(regs) // 2]} (max {regs[-1]})")
    if smem:
        parts.append(f"smem max {max(smem)} B")
    parts.append(f"{spill} spill" if spill else "no spills")
    return "; ".join(parts)
