"""What a run was: the provenance ``results.json`` stores beside its records (matrix, versions, host, GPUs,
commit, when), what happened to it (interrupted, resumed), and what it set out to build (``selected``). Written
by the pytest plugin, read by the reports, the compare gate and the history; a payload, so a misspelt key is an
error mypy reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.model.payloads import Payload


@dataclass(frozen=True)
class MatrixRef(Payload):
    """The matrix a run expanded: its name, where it was read from, the sha256 of its bytes (what a resume
    checks)."""

    name: str | None = None
    path: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class Selection(Payload):
    """One compile case the run's matrix selected and the configs it will build: what tells a build the run lost
    (cut, crashed) from one it never meant to make (``harness compare``'s missing in new)."""

    kernel: str | None = None
    dtype: str | None = None
    shape: Mapping[str, Any] | None = None
    target: str | None = None
    environment: str | None = None
    configs: tuple[Mapping[str, Any], ...] | None = None


@dataclass(frozen=True)
class ShardRef(Payload):
    """The shard of the matrix a run ran (``harness run --shard``; :mod:`harness.matrix.shards`): 1-based index,
    the number of shards, and where the index came from (``--shard`` or the CI engine's variables)."""

    index: int | None = None
    total: int | None = None
    source: str | None = None


@dataclass(frozen=True)
class NightRef(Payload):
    """Several shard runs rendered as one (``harness report`` over a night's folder; not stored): how many shards
    the matrix was cut into, each chosen shard run's directory as the report links it, and what makes the night
    incomplete (empty: every shard once)."""

    total: int | None = None
    dirs: tuple[str, ...] | None = None
    problems: tuple[str, ...] | None = None


@dataclass(frozen=True)
class RunInfo(Payload):
    matrix: MatrixRef | None = None
    triton: str | None = None
    torch: str | None = None
    numpy: str | None = None
    python: str | None = None
    host: str | None = None
    platform: str | None = None
    cpu: str | None = None  # the machine kind compile costs compare on: CPU model and the cores this run could use
    gpus: tuple[str, ...] | None = None
    commit: str | None = None
    argv: tuple[str, ...] | None = None
    start: str | None = None
    end: str | None = None  # None: unfinished (killed, or still running)
    hip_lld: str | None = None
    targets: tuple[str, ...] | None = None
    selected: tuple[Selection, ...] | None = None
    shard: ShardRef | None = None  # None: the whole matrix
    compare_thresholds: Mapping[str, float] | None = None
    interrupted: bool | None = None
    resumed: tuple[str, ...] | None = None  # when it was resumed, each time
    read_warnings: tuple[str, ...] | None = None  # what reading it skipped (a torn records.jsonl line)
    dir: str | None = None  # the run's directory as a report links it (set by ``harness report``, not stored)
    night: NightRef | None = None  # a night of shard runs taken as this one run (set by ``harness report``)

    @property
    def unfinished(self) -> bool:
        return bool(self.interrupted) or not self.end
