"""Where a compiled function's GPU time goes: each of its Triton kernels' share of one call's device time, read from
the call split on the GPU (:class:`harness.model.runtime.GraphTime`, one per tune case of the function's kernels).

Every kernel of an entry, shape and dtype is its own tune case and each measured the same call; the split kept is
the one whose call's span is the median of theirs (one measurement, not a blend). What the Triton kernels leave is
named as the rest: the graph's extern kernels (a library GEMM, attention), copies and the gaps between launches."""

from __future__ import annotations

from dataclasses import dataclass

from harness.model.records import Record


@dataclass(frozen=True)
class Share:
    """One call of a compiled function on the GPU: its span and each Triton kernel's share, largest first."""

    total_us: float
    kernels: tuple[tuple[str, float], ...]  # (kernel name, share of total_us)
    rest: float  # what the kernels leave of total_us (never below 0)
    reps: int


def of(tunes: list[Record]) -> Share | None:
    """The split of a compiled function's call from its kernels' tune records, or None where none was measured."""
    split = [t.runtime.graph_time for t in tunes if t.runtime and t.runtime.graph_time]
    measured = sorted((g for g in split if g.total_us and g.kernels), key=lambda g: float(g.total_us or 0.0))
    if not measured:
        return None
    g = measured[(len(measured) - 1) // 2]
    total = float(g.total_us or 0.0)
    kernels = sorted(((name, us / total) for name, us in (g.kernels or {}).items()), key=lambda kv: -kv[1])
    return Share(total, tuple(kernels), max(0.0, 1.0 - sum(s for _, s in kernels)), int(g.reps or 0))
