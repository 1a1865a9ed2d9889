"""The jobs the harness hands its worker processes, typed on both sides of the pipe.

A job is built with its constructor where the case is expanded (:mod:`harness.matrix.cases`) or where the tuning
stage asks the device (:mod:`harness.tuning.gpu_phase`), keyed by the result cache
(:mod:`harness.execution.result_cache`), sent as JSON (:meth:`to_wire`) and read back in the worker
(:func:`from_wire`), which refuses a key it does not know or one it misses: a producer and a consumer that disagree
fail on the first job, loudly, instead of a field read as absent. The request's op names the class the worker
decodes it as (:data:`KINDS`); its ``REPLY`` names the class its answer is read back as (:mod:`harness.model.replies`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from harness.model.replies import (
    AgreementReply,
    BaselinesReply,
    CompileReply,
    ConfigReply,
    InterpretReply,
    Reply,
    SustainedReply,
    WarmupReply,
)


class JobError(ValueError):
    """A job on the wire that is not one this harness writes."""


@dataclass(frozen=True)
class CompileJob:
    """One config of a case, cross-compiled for one target: its artifacts under ``out``/``artifact_parts``."""

    OP: ClassVar[str] = "compile"
    REPLY: ClassVar[type[Reply]] = CompileReply
    ref: str  # the kernel, as harness.intake.loader resolves it
    dtype: str
    shape: Mapping[str, int]
    target: Mapping[str, Any]  # harness.model.targets.Target.to_dict()
    config: Mapping[str, Any]
    out: str  # the run directory
    artifact_parts: tuple[str, ...]  # the build's folder below it
    prebuild_launcher: bool = False  # also build Triton's launcher for the local GPU (a side effect: never cached)


@dataclass(frozen=True)
class InterpretJob:
    """One config of a case checked under Triton's CPU interpreter against its reference, at each shape."""

    OP: ClassVar[str] = "interpret"
    REPLY: ClassVar[type[Reply]] = InterpretReply
    ref: str
    dtype: str
    shapes: tuple[Mapping[str, int], ...]
    config: Mapping[str, Any]
    seed: int = 0


@dataclass(frozen=True)
class AgreementJob:
    """One launch of a spec captured in the interpreter worker, each argument checked against its description."""

    OP: ClassVar[str] = "agreement"
    REPLY: ClassVar[type[Reply]] = AgreementReply
    ref: str
    dtype: str
    shape: Mapping[str, int]
    config: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class OnDevice:
    """What every GPU request names of its case: the device worker builds the inputs and the reference once per
    case (:mod:`harness.device.operations`) and serves its configs, baselines and sustained rounds from them."""

    ref: str
    dtype: str
    shape: Mapping[str, int]
    seed: int = 0
    cache_bytes: int | None = None  # what a cold-cache timing flushes (the catalogue's L2 and beyond)
    target: str | None = None  # the catalogue entry, for specs whose kernel is a function of the target


@dataclass(frozen=True, kw_only=True)
class GpuConfigJob(OnDevice):
    """One config checked and timed: ``screen`` (check, a short timing), ``final`` (a screened config timed in
    full, not checked again) or ``full`` (both)."""

    OP: ClassVar[str] = "gpu_config"
    REPLY: ClassVar[type[Reply]] = ConfigReply
    config: Mapping[str, Any]
    stage: str = "full"
    cache_key: str = ""  # the build's Triton cache key: the binary that launches is compared with it


@dataclass(frozen=True, kw_only=True)
class BaselinesJob(OnDevice):
    """The case's vendor baselines, each checked and timed in isolation."""

    OP: ClassVar[str] = "gpu_baselines"
    REPLY: ClassVar[type[Reply]] = BaselinesReply


@dataclass(frozen=True, kw_only=True)
class SustainedJob(OnDevice):
    """Configs (config id -> config) and baselines (names) timed back to back in interleaved rounds."""

    OP: ClassVar[str] = "gpu_sustained"
    REPLY: ClassVar[type[Reply]] = SustainedReply
    configs: Mapping[str, Mapping[str, Any]]
    baselines: tuple[str, ...] = ()


@dataclass(frozen=True)
class WarmupJob:
    """Import torch and create the CUDA context while the case compiles; launches nothing."""

    OP: ClassVar[str] = "gpu_warmup"
    REPLY: ClassVar[type[Reply]] = WarmupReply


Job = Union[CompileJob, InterpretJob, AgreementJob, GpuConfigJob, BaselinesJob, SustainedJob, WarmupJob]
GpuJob = Union[GpuConfigJob, BaselinesJob, SustainedJob, WarmupJob]
KINDS: dict[str, type[Job]] = {
    cls.OP: cls for cls in (CompileJob, InterpretJob, AgreementJob, GpuConfigJob, BaselinesJob, SustainedJob, WarmupJob)
}


def to_wire(job: Job) -> dict[str, Any]:
    """The job as the JSON object the worker reads (and the result cache keys)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(job):
        value = getattr(job, f.name)
        if isinstance(value, Mapping):
            value = {k: dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}
        elif isinstance(value, tuple):
            value = [dict(v) if isinstance(v, Mapping) else v for v in value]
        out[f.name] = value
    return out


def from_wire(op: str, raw: Mapping[str, Any]) -> Job:
    """The job of kind ``op`` from its JSON; JobError naming the keys where they are not the class's."""
    cls = KINDS.get(op)
    if cls is None:
        raise JobError(f"no job of kind {op!r} (known: {', '.join(sorted(KINDS))})")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    missing = sorted(
        n
        for n, f in fields.items()
        if n not in raw and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    if unknown or missing:
        said = ([f"unknown {', '.join(unknown)}"] if unknown else []) + (
            [f"missing {', '.join(missing)}"] if missing else []
        )
        raise JobError(f"a {op} job with keys this harness does not write: {'; '.join(said)}")
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    return cls(**values)
