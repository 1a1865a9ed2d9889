"""What changed between two runs, in the few facts a person asks first: what was set differently (torch, Triton,
a compiled entry's mode, the targets), which kernels appeared, went or were rewritten, and which findings
are new (a config that spills, exceeds a limit or fails now and did not before). ``harness compare`` prints these
before its record-by-record account, so a mode change that brings six spilling templates is said in its first
lines, not 200 lines down among "only in new".

A finding is new where the new run's config shows a kind (:data:`harness.analysis.gate.TABLE`, the kinds every
surface names) that the base's same config (kernel, dtype, shape, config; the Triton version aside, since a bump is
the question) did not show, or where the base has no such config at all. Decides nothing about the exit code: the
record comparison does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.analysis import gate
from harness.analysis.compiled_compare import CompiledComparison
from harness.analysis.rows import Row, build_rows
from harness.model.records import Record
from harness.model.run_info import RunInfo

#: the kinds a headline names as new (``not-checked`` and ``incomplete`` say how a run went, not what a kernel does)
NEWS = ("failed", "exceeds", "one-vendor", "at-risk", "spills")


@dataclass(frozen=True)
class Setting:
    """One thing the two runs were made with differently."""

    what: str  # "torch", "Triton", "targets", "mode of mlp"
    base: str
    new: str


@dataclass(frozen=True)
class NewFinding:
    """The configs that show a finding kind in the new run and did not in the base."""

    kind: str
    configs: tuple[str, ...]  # each as "kernel shape dtype config: targets"


@dataclass(frozen=True)
class Headline:
    settings: tuple[Setting, ...]
    kernels_added: tuple[str, ...]
    kernels_removed: tuple[str, ...]
    kernels_changed: tuple[str, ...]
    new_findings: tuple[NewFinding, ...]
    gone_findings: tuple[NewFinding, ...]  # shown in the base, not in new (fixed, or the config is gone)


def headline(
    base: Sequence[Record],
    new: Sequence[Record],
    base_run: RunInfo | None,
    new_run: RunInfo | None,
    compiled: CompiledComparison | None = None,
) -> Headline:
    """The headline of two runs' records (and their compiled kernels' comparison, where they have compiled
    entries: it knows a kernel rewritten in place, which names alone do not)."""
    settings = _run_settings(base_run, new_run) + _entry_settings(base, new)
    before, after = _kernels(base), _kernels(new)
    changed = sorted({c.kernel for c in compiled.changes if c.kind == "changed"}) if compiled else []
    old_rows, new_rows = build_rows(list(base)), build_rows(list(new))
    return Headline(
        settings=tuple(settings),
        kernels_added=tuple(sorted(after - before)),
        kernels_removed=tuple(sorted(before - after)),
        kernels_changed=tuple(changed),
        new_findings=_news(old_rows, new_rows),
        gone_findings=_news(new_rows, old_rows),
    )


def _run_settings(base_run: RunInfo | None, new_run: RunInfo | None) -> list[Setting]:
    if base_run is None or new_run is None:
        return []
    out = []
    for what, field in (("torch", "torch"), ("Triton", "triton")):
        a, b = getattr(base_run, field), getattr(new_run, field)
        if a and b and a != b:
            out.append(Setting(what, str(a), str(b)))
    if base_run.targets and new_run.targets and set(base_run.targets) != set(new_run.targets):
        out.append(Setting("targets", ",".join(base_run.targets), ",".join(new_run.targets)))
    return out


def _entry_settings(base: Iterable[Record], new: Iterable[Record]) -> list[Setting]:
    """Each compiled entry's mode and options, where both runs hold the entry and they differ."""

    def of(records: Iterable[Record]) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in records:
            if r.inductor.entry is not None and r.mode == "compile" and r.inductor.mode is not None:
                out.setdefault(r.inductor.entry, r.inductor.mode)
        return out

    a, b = of(base), of(new)
    return [Setting(f"mode of {e}", a[e], b[e]) for e in sorted(a.keys() & b.keys()) if a[e] != b[e]]


def _kernels(records: Iterable[Record]) -> set[str]:
    return {r.kernel for r in records if r.mode == "compile"}


def _news(before: Sequence[Row], after: Sequence[Row]) -> tuple[NewFinding, ...]:
    def key(row: Row) -> tuple[str, str, str, str]:
        return (row.kernel, row.dtype, row.shape_id, row.config_id)

    had = {kind.name: {key(row) for row in before if kind.has(row)} for kind in gate.TABLE if kind.name in NEWS}
    out = []
    for kind in gate.TABLE:
        if kind.name not in NEWS:
            continue
        found = [row for row in after if not row.judged.duplicate and kind.has(row) and key(row) not in had[kind.name]]
        if found:
            out.append(NewFinding(kind.name, tuple(_said(row, kind) for row in found)))
    return tuple(out)


def _said(row: Row, kind: gate.Kind) -> str:
    """A config, with the targets it shows the kind on where the kind is a target verdict."""
    targets = [t for t, tv in row.judged.targets.items() if kind.verdict and tv.verdict == kind.verdict]
    where = f": {', '.join(sorted(targets))}" if targets else ""
    return f"{row.kernel} {row.shape_id} {row.dtype} {row.config_id}{where}"
