"""What a worker answers each job with, typed on both sides of the pipe (the jobs: :mod:`harness.model.jobs`).

A worker function builds its reply with the constructors below; :mod:`harness.execution.worker_main` writes it as
JSON (``to_json``) and :class:`harness.execution.pool.Worker` reads it back as the job's reply class
(:meth:`~harness.model.payloads.Payload.from_wire`), which refuses a key the class does not know: a worker and a harness that disagree fail on
the first reply instead of a figure read as absent. What happened to the process rather than the job (a timeout, a
crash, an exception the worker caught) is the same class with ``status`` and ``error`` set, so every caller reads
one type whatever became of the child.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from harness.model.build_facts import BuildFigures
from harness.model.payloads import Payload
from harness.model.runtime import (
    CaseFigures,
    ConfigFigures,
    InterpretCorrectness,
    Timing,
)

R = TypeVar("R", bound="Reply")


class ReplyError(ValueError):
    """A reply that is not the one its job's class names."""


@dataclass(frozen=True)
class Reply(Payload):
    """What every reply says: ``ok``, or what went wrong (``error``, ``timeout``, ``crash``, ``fault``, a job's own
    failure status) with the worker's traceback; ``retire_worker`` when the job changed the process for later jobs."""

    status: str | None = None
    error: str | None = None
    traceback: str | None = None
    retire_worker: str | None = None

    @classmethod
    def of(cls: type[R], reply: Reply) -> R:
        """``reply`` as this class: what a worker answers the job whose ``REPLY`` this is (ReplyError otherwise)."""
        if not isinstance(reply, cls):
            raise ReplyError(f"expected a {cls.__name__}, the worker's answer was read as a {type(reply).__name__}")
        return reply

    @classmethod
    def failed(cls: type[R], status: str, error: str, traceback: str = "") -> R:
        """The reply of a job that did not finish (the worker's exception, a timeout, a crash)."""
        return cls(status=status, error=error, traceback=traceback or None)


@dataclass(frozen=True)
class CompileReply(BuildFigures, Reply):
    """One build's figures as the compile worker found them: :class:`~harness.model.build_facts.BuildFigures`, the
    fields of the record they become; ``triton`` is the worker's own Triton (the record keeps the case's)."""

    triton: str | None = None
    # a kernel Inductor generated: the interpreter's check of this config in its graph, made at capture
    # (harness.intake.inductor.compiled_check); the record keeps it as an interpreter record keeps its own
    correctness: InterpretCorrectness | None = None


@dataclass(frozen=True)
class InterpretReply(Reply):
    """One config checked by Triton's CPU interpreter at each interpret shape."""

    run_s: float | None = None
    correctness: InterpretCorrectness | None = None


@dataclass(frozen=True)
class AgreementReply(Reply):
    """Each argument one captured launch passes otherwise than the spec declares it."""

    problems: tuple[str, ...] | None = None
    note: str | None = None


@dataclass(frozen=True)
class ConfigReply(ConfigFigures, Reply):
    """One config on the GPU: its check against the reference, then its timing (the GPU phase's runtime of it).
    Its figures are :class:`~harness.model.runtime.ConfigFigures` (after the reply's own fields, as it writes them);
    ``spent_s``, where the request's seconds went, goes to the case's phases, not to the config's entry."""

    spent_s: Mapping[str, float] | None = None


@dataclass(frozen=True)
class BaselinesReply(CaseFigures, Reply):
    """The case's baselines, each checked and timed in isolation, with what the worker measured once
    (:class:`~harness.model.runtime.CaseFigures`, the fields the tune record's runtime keeps)."""

    spent_s: Mapping[str, float] | None = None
    tainted: str | None = None  # what a baseline changed in the process (a later compile there would differ)


@dataclass(frozen=True)
class SustainedEntry(Payload):
    """One config or baseline timed in the interleaved rounds, or why it could not be."""

    status: str | None = None
    error: str | None = None
    timing: Timing | None = None


@dataclass(frozen=True)
class SustainedReply(Reply):
    """Configs and baselines timed back to back in interleaved rounds: ``config <id>`` / ``baseline <name>``."""

    timings: Mapping[str, SustainedEntry] | None = None
    spent_s: Mapping[str, float] | None = None


@dataclass(frozen=True)
class WarmupReply(Reply):
    """A GPU worker with torch imported and its CUDA context made."""

    warmup_s: float | None = None
