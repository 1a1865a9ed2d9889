"""What a GPU found, typed: the ``runtime`` payload of a launched config and of a case's ``tune`` record, and the
``correctness`` payload of an interpreter record. Written at the GPU phase's edge (a worker's JSON reply becomes a
payload there) and read by the analysis and the reports as fields, so a misspelt key is an error mypy reports.

Every field is optional: what a runtime holds depends on how far its config got (``not_launched`` holds a
``reason``; a screened config a short ``timing`` and ``stage: screen``; the tune record the winner's figures, the
baselines and the portability entries). JSON keys this harness does not know are kept (``Payload.extra``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.model.payloads import Payload


@dataclass(frozen=True)
class Timing(Payload):
    """One timing of one kernel, from the timer (:func:`harness.device.timing.summarize`) through the worker's
    reply and the record to the compare verdict: its raw samples and what they say. Fields in the order records have
    always held them (the flush's size last: the isolated timer adds it)."""

    method: str | None = None  # "isolated" (one flushed launch per sample) | "sustained" (back-to-back launches)
    samples_us: tuple[float, ...] | None = None
    median_us: float | None = None
    p20_us: float | None = None
    p80_us: float | None = None
    reps: int | None = None
    rotated_buffers: int | None = None
    graph: bool | None = None
    warmup_discarded: int | None = None
    iqr_over_median: float | None = None
    stable: bool | None = None
    launches_per_sample: int | None = None
    round_medians_us: tuple[float, ...] | None = None
    note: str | None = None
    flush_bytes: int | None = None  # isolated: the L2 flush's read before each sample
    sm_clock_mhz: float | None = None  # sustained: the median SM clock NVML read during the timed batches
    power_capped: float | None = None  # sustained: the share of those readings with a power-cap reason set

    @property
    def median(self) -> float:
        """The median in microseconds (NaN where none was stored)."""
        return math.nan if self.median_us is None else float(self.median_us)


@dataclass(frozen=True)
class Check(Payload):
    """An output against its reference (each output under ``outputs``, the totals at the top); an interpreter
    record's per-shape check also names its ``shape``."""

    status: str | None = None  # "ok" | "mismatch" | "skipped"
    error: str | None = None
    reason: str | None = None
    shape: Mapping[str, Any] | None = None
    max_abs_err: float | None = None
    mismatched: int | None = None
    nonfinite: int | None = None
    elements: int | None = None
    atol: float | None = None
    rtol: float | None = None
    outputs: Mapping[str, Check] | None = None


@dataclass(frozen=True)
class InterpretCorrectness(Payload):
    """What Triton's CPU interpreter found for one config: a check per interpret shape, the worst error."""

    mode: str | None = None
    checks: tuple[Check, ...] | None = None
    max_abs_err: float | None = None
    from_cache: bool | None = None  # this run took it from the harness's result cache (harness.execution.result_cache)

    @property
    def failed(self) -> tuple[Check, ...]:
        """The checks that ran and did not match (or raised in the kernel)."""
        return tuple(c for c in self.checks or () if c.status not in ("ok", "skipped"))

    @property
    def unchecked(self) -> tuple[Check, ...]:
        """The checks the interpreter could not make (each with its reason): never a pass."""
        return tuple(c for c in self.checks or () if c.status == "skipped")


@dataclass(frozen=True)
class LaunchedBinary(Payload):
    """The binary Triton's JIT built for the launch (what launch parity matches the static build with)."""

    kind: str | None = None  # "cubin" | "hsaco"
    sha256: str | None = None
    code_sha256: str | None = None  # every ELF section but the line table (harness.compiling.cubin_sections)
    cache_key: str | None = None
    note: str | None = None  # why no binary could be tied to the launch, or how it was found
    ttir_sha256: str | None = None
    ttir_func: str | None = None


@dataclass(frozen=True)
class WorkModel(Payload):
    """The spec's own count of the work: what a rate and a roof are computed from (harness.analysis.roofline)."""

    flops: float | None = None
    bytes: float | None = None


@dataclass(frozen=True)
class GpuSlot(Payload):
    """The GPU a case ran on, as detection named it (harness.device.detection: from nvidia-smi or rocminfo, without
    a GPU context). Fields in the order detection wrote them when this was a dict, so a record's JSON is unchanged."""

    index: str | None = None
    arch: str | None = None
    name: str | None = None
    uuid: str | None = None
    driver: str | None = None


@dataclass(frozen=True)
class DeviceInfo(Payload):
    """The device as the worker measured it once (its clocks, memory, L2): the context of every figure."""

    name: str | None = None
    arch: str | None = None
    sm_count: int | None = None
    memory_bytes: int | None = None
    l2_bytes: int | None = None
    runtime: str | None = None
    torch: str | None = None
    visible: str | None = None
    driver: str | None = None
    uuid: str | None = None
    sm_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None


@dataclass(frozen=True)
class Baseline(Payload):
    """A reference implementation timed beside the winner, with its speedup over the winner."""

    status: str | None = None
    error: str | None = None
    matches_reference: bool | None = None
    kernels: tuple[str, ...] | None = None
    outputs_compared: tuple[str, ...] | None = None
    timing: Timing | None = None
    sustained: Timing | None = None
    sustained_error: str | None = None
    tflops: float | None = None
    gbps: float | None = None
    model: WorkModel | None = None
    speedup: float | None = None
    speedup_method: str | None = None
    speedup_rounds: tuple[float, ...] | None = None


@dataclass(frozen=True)
class PortabilityEntry(Payload):
    """Another target's winner, run on this device: does it fit, how much slower than this device's own."""

    source: str | None = None
    config: Mapping[str, Any] | None = None
    config_id: str | None = None
    fits: bool | None = None
    status: str | None = None
    slowdown: float | None = None
    timing_method: str | None = None
    note: str | None = None
    # True: that target's own winner, read from the stored run the user named and timed here; the analysis keeps
    # such an entry as it stands (it prices only the entries the tuner could not). Absent in records from before
    # 2026-12-05, which said it only in ``source``.
    stored_winner: bool | None = None

    def is_stored_winner(self) -> bool:
        return bool(self.stored_winner) or (
            self.stored_winner is None and (self.source or "").startswith(STORED_WINNER_SOURCE)
        )


STORED_WINNER_SOURCE = "its winner in the stored run, timed here"


@dataclass(frozen=True)
class Phases(Payload):
    """Where a case's seconds went: waiting for the GPU, the configs, the baselines, the finalists and baselines
    timed together (``sustained``; before it was its own phase, runs counted it in ``baselines``), the compiles."""

    gpu_lock_wait: float | None = None
    configs: float | None = None
    baselines: float | None = None
    sustained: float | None = None
    baselines_detail: Mapping[str, float] | None = None
    compile: float | None = None
    configs_detail: Mapping[str, float] | None = None  # the config requests' seconds by step, summed


@dataclass(frozen=True)
class ConfigFigures(Payload):
    """What one config's run on the GPU found, declared once: the worker's reply carries them
    (:class:`harness.model.replies.ConfigReply`) and the record's runtime entry keeps them (:class:`Runtime`, made
    from the reply by :meth:`Payload.recast`). A record's JSON holds them in the order the reply was written."""

    stage: str | None = None  # "screen" | "final" | "full"
    correctness: Check | None = None
    first_launch_s: float | None = None
    launched_binary: LaunchedBinary | None = None
    timing: Timing | None = None  # the full timing (isolated); the tune record's: its headline
    tflops: float | None = None
    gbps: float | None = None
    model: WorkModel | None = None


@dataclass(frozen=True)
class GraphTime(Payload):
    """One call of a compiled function on the GPU, Inductor's own choices in it, its device time split by its
    Triton kernels (:mod:`harness.device.graph_time`): the median over ``reps`` calls of the call's span and of each
    kernel's (a kernel launched twice a call: the sum). What the kernels leave of ``total_us`` is the graph's extern
    kernels (a cuBLAS GEMM, cuDNN attention), copies and the gaps between launches."""

    total_us: float | None = None
    kernels: Mapping[str, float] | None = None
    reps: int | None = None
    error: str | None = None  # why the call could not be split


@dataclass(frozen=True)
class CaseFigures(Payload):
    """What a case's GPU worker measured beside its configs, declared once: the baselines reply carries them
    (:class:`harness.model.replies.BaselinesReply`) and the tune record's runtime keeps them (:class:`Runtime`)."""

    device: DeviceInfo | None = None
    copy_tbps: float | None = None
    torch_settings: Mapping[str, bool | str] | None = None
    baselines: Mapping[str, Baseline] | None = None
    graph_time: GraphTime | None = None  # a compiled function's case: its call's device time by kernel


@dataclass(frozen=True)
class Runtime(ConfigFigures, CaseFigures):
    """One config on the GPU (check, timings, rates, launch parity), or a case's winner (``tune`` records: also
    the case's :class:`CaseFigures`)."""

    status: str | None = None  # "ok" | "mismatch" | "error" | "launch_error" | "not_launched" | ...
    reason: str | None = None  # why it was not launched
    error: str | None = None
    launch_parity: str | None = None  # "identical" | "differs" | "not observed"
    launch_parity_detail: str | None = None
    screen_timing: Timing | None = None
    sustained: Timing | None = None
    sustained_error: str | None = None
    isolated: Timing | None = None
    timing_method: str | None = None
    gpu: GpuSlot | None = None
    # the tune record's
    portability: Mapping[str, PortabilityEntry] | None = None
    median_us: float | None = None
    winner_source: str | None = None  # "tuned" | "cache"
    tuned_because: str | None = None
    phases_s: Phases | None = None
    gpu_window: tuple[float, ...] | None = None  # wall-clock span the case held the GPU
    configs_launched: int | None = None
    configs_failed: int | None = None
    configs_not_launched: int | None = None
    gpu_worker_retired: str | None = None
    device_as: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def screened(self) -> bool:
        """Timed only briefly, to rank it (its ``timing`` is a screen's)."""
        return self.stage == "screen"

    @property
    def median(self) -> float:
        """The full (or screen) timing's median in microseconds; NaN where there is none."""
        return self.timing.median if self.timing is not None else math.nan


#: how a build's not-launched reason begins where this host's GPU is another model than its target (the terminal
#: says each such reason once: ``harness.analysis.findings``)
NOT_THIS_MODEL = "static only:"


def not_launched(reason: str) -> Runtime:
    return Runtime(status="not_launched", reason=reason)
