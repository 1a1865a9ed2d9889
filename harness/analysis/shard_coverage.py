"""A night's shard runs (``harness run --shard I/N`` on several CI jobs) taken as one run, or named as incomplete.

Shards of one night share the matrix (its sha256), the Triton version and N; together they must hold every index
1..N exactly once. A shard run twice (a CI retry) counts once: the later attempt, by its start, replaces the
earlier, and the replacement is said. A missing index, an index given twice by the same run (the same files
collected twice), a case found in two shards (runs of different splits mixed), a shard narrowed by ``-k``, or
shards run with different ``--targets`` makes the night incomplete,
each named: ``harness compare`` then cannot compare it (exit 3), ``harness report`` renders what is there and
exits 3. A complete night becomes one run: the first shard's provenance, started when the first shard started,
ended when the last one ended (unfinished if any shard is), its shards' selections together, and which shard
runs made it (``RunInfo.night``: what a report shows of the shards).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from harness.analysis.merge import merge
from harness.model.records import Record
from harness.model.run_info import NightRef, RunInfo


@dataclass(frozen=True)
class Night:
    run: RunInfo
    records: list[Record]
    problems: tuple[str, ...]  # what makes it incomplete, each named; empty: every shard once
    notes: tuple[str, ...]  # retried shards whose earlier attempt was left out
    chosen: tuple[str, ...]  # the labels of the shard runs that make the night (a retry's latest attempt)


def is_sharded(loaded: list[tuple[str, RunInfo, list[Record]]]) -> bool:
    return any(run.shard is not None for _, run, _ in loaded)


def nights(loaded: list[tuple[str, RunInfo, list[Record]]]) -> list[Night]:
    """The shard runs among ``loaded`` grouped into nights (same matrix, Triton and N), each checked; runs without a
    shard are not in any."""
    sharded = sorted((t for t in loaded if t[1].shard is not None), key=lambda t: _group(t[1]))
    return [combine(list(group)) for _, group in groupby(sharded, key=lambda t: _group(t[1]))]


def _group(run: RunInfo) -> tuple[str, str, int]:
    shard = run.shard
    return (str(run.matrix.sha256 if run.matrix else ""), str(run.triton or ""), int(shard.total or 0) if shard else 0)


def combine(loaded: list[tuple[str, RunInfo, list[Record]]]) -> Night:
    """The night the shard runs ``loaded`` (label, run info, records) make together."""
    problems: list[str] = []
    notes: list[str] = []
    unsharded = [label for label, run, _ in loaded if run.shard is None]
    if unsharded:
        problems.append(f"{', '.join(unsharded)}: not a shard run, mixed with shard runs")
    sharded = [t for t in loaded if t[1].shard is not None]
    groups = {key for key in (_group(run) for _, run, _ in sharded)}
    if len(groups) > 1:
        problems.append(
            "shard runs of different nights mixed: "
            + "; ".join(f"matrix {m[:12]}, triton {t}, {n} shards" for m, t, n in sorted(groups))
        )
    chosen: list[tuple[str, RunInfo, list[Record]]] = []
    total = max((n for _, _, n in groups), default=0)
    by_index = sorted(sharded, key=lambda t: (int(t[1].shard.index or 0) if t[1].shard else 0, str(t[1].start)))
    indices = {}
    for index, attempts_iter in groupby(by_index, key=lambda t: int(t[1].shard.index or 0) if t[1].shard else 0):
        attempts = list(attempts_iter)
        indices[index] = attempts
        starts = [str(run.start) for _, run, _ in attempts]
        if len(set(starts)) < len(starts):
            problems.append(f"shard {index}/{total} given twice by the same run: {', '.join(a[0] for a in attempts)}")
        for label, run, _ in attempts[:-1]:
            notes.append(
                f"shard {index}/{total}: {attempts[-1][0]} (started {attempts[-1][1].start}) replaces "
                f"{label} (started {run.start})"
            )
        chosen.append(attempts[-1])
    missing = [i for i in range(1, total + 1) if i not in indices]
    if missing:
        problems.append(f"shard{'s' if len(missing) > 1 else ''} {', '.join(f'{i}/{total}' for i in missing)} missing")
    for label, run, _ in chosen:  # a shard narrowed by -k holds only part of its cases: the night is not whole
        argv = list(run.argv or ())
        narrowed = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-k"), None) or next(
            (a[3:] for a in argv if a.startswith("-k=")), None
        )
        if narrowed:
            shard = run.shard
            problems.append(f"shard {shard.index if shard else '?'}/{total} ({label}) ran only -k {narrowed!r}")
    if len({tuple(run.targets or ()) for _, run, _ in chosen}) > 1:
        problems.append("shard runs of different --targets: " + "; ".join(
            f"{label}: {', '.join(run.targets or ()) or 'the matrix'}" for label, run, _ in chosen))  # fmt: skip
    owner: dict[str, str] = {}
    for label, _, records in chosen:
        for case in sorted({r.case_id for r in records if r.case_id}):
            if case in owner and owner[case] != label:
                problems.append(f"case {case} in two shards: {owner[case]} and {label}")
            owner.setdefault(case, label)
    night = NightRef(total=total, dirs=tuple(run.dir or label for label, run, _ in chosen), problems=tuple(problems))
    return Night(
        _one_run([run for _, run, _ in chosen], night),
        merge(r for _, _, r in chosen),
        tuple(problems),
        tuple(notes),
        tuple(label for label, _, _ in chosen),
    )


def _one_run(runs: list[RunInfo], night: NightRef) -> RunInfo:
    if not runs:
        return RunInfo()
    first = min(runs, key=lambda r: str(r.start))
    ends = [r.end for r in runs]
    return first.updated(
        start=min(str(r.start) for r in runs),
        end=None if any(e is None for e in ends) else max(str(e) for e in ends),
        interrupted=any(bool(r.interrupted) for r in runs),
        selected=tuple(s for r in runs for s in (r.selected or ())),
        shard=None,
        dir=None,
        night=night,
        # shards on CI runners of different CPUs: no one machine kind, so compile cost is never judged across them
        cpu=_machine_kind(runs),
    )


def _machine_kind(runs: list[RunInfo]) -> str | None:
    """The shards' CPU kind; shards on runners of different CPUs have none, so compile cost is not judged across
    them (None: the runs did not record one)."""
    kinds = sorted({r.cpu for r in runs if r.cpu})
    return kinds[0] if len(kinds) == 1 else ("several: " + "; ".join(kinds) if kinds else None)
