"""On-device work, inside a GPU worker pinned to one GPU: check, time, compare with baselines.

One request is one config (``gpu_config``) or a case's baselines (``gpu_baselines``),
so a kernel that faults (an illegal address poisons the whole CUDA context) costs
only its own request: the worker answers ``fault`` and exits, and the next
request gets a fresh process. Inputs are drawn fresh per case and reused across
that case's configs; every launch writes into a NaN-poisoned output.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any

from harness.authoring.correctness import compare_outputs, reference_first
from harness.compiling.cubin_sections import code_digest
from harness.device.laps import Laps
from harness.intake import loader
from harness.model.jobs import GpuConfigJob, OnDevice, WarmupJob
from harness.model.replies import ConfigReply, WarmupReply
from harness.model.runtime import DeviceInfo, LaunchedBinary, WorkModel


@dataclass
class CaseState:
    """The case a GPU worker serves now: its inputs and reference, drawn once and reused by every config and
    baseline of the case (``rotated``: copies cycled through so no sample reads a warm L2)."""

    key: str
    spec: Any  # harness.authoring.spec.KernelSpec, for this target
    inputs: tuple[Any, ...]
    reference: Any
    pristine: dict[int, Any]  # what an in-place kernel overwrites, kept
    cache_bytes: int | None
    rotated: list[tuple[Any, ...]] | None = None
    settled: bool = False


@dataclass
class Persist:
    """What a GPU worker keeps for its lifetime: the L2 flusher, the device's details and copy bandwidth (measured
    once), and what a baseline changed in the process (``tainted``: the worker retires after the case)."""

    flusher: Any = None
    flusher_bytes: int | None = None
    device: DeviceInfo | None = None
    copy_tbps: float | None = None
    tainted: str = ""
    case: list[CaseState] = field(default_factory=list)  # the current case (none before the first request)


_PERSIST = Persist()
_FAULT_MARKERS = (
    "illegal memory access",
    "illegal address",
    "unspecified launch failure",
    "misaligned address",
    "device-side assert",
    "an illegal instruction",
    "hipErrorIllegalAddress",
    "HSA_STATUS_ERROR",
)


class ContextLost(Exception):
    """The device context is unusable; the worker must be replaced after replying."""


def _case(job: OnDevice) -> CaseState:
    import torch

    key = repr((job.ref, job.dtype, sorted(job.shape.items()), job.seed, job.target))
    if not _PERSIST.case or _PERSIST.case[0].key != key:
        _PERSIST.case.clear()
        torch.cuda.empty_cache()
        spec = loader.load(job.ref)
        if job.target:  # a spec whose fn is a function of the target: this device's kernel
            from harness.model.targets import get

            spec = spec.for_target(get(job.target))
        gen = torch.Generator(device="cuda").manual_seed(int(job.seed))
        inputs = spec.inputs(dict(job.shape), job.dtype, "cuda", gen)
        reference = reference_first(spec, inputs, dict(job.shape))
        pristine = {i: inputs[i].clone() for i in spec.inplace}
        torch.cuda.synchronize()
        _PERSIST.case.append(CaseState(key, spec, tuple(inputs), reference, pristine, job.cache_bytes))
    return _PERSIST.case[0]


def _settle_ms(state: CaseState) -> float:
    """Settle the clocks once per case: its later configs follow back to back, the GPU never idles between."""
    if state.settled:
        return 25.0
    state.settled = True
    return 200.0


def gpu_warmup(job: WarmupJob) -> WarmupReply:
    """Import torch and create the CUDA context without launching anything.

    Sent while the case's configs compile, so process start and context creation
    overlap the compiles; safe outside the GPU lock because it runs no kernel.
    """
    import torch

    started = time.perf_counter()
    torch.cuda.init()
    torch.empty(1, device="cuda")
    torch.cuda.current_blas_handle()  # cuBLAS start-up (references and baselines use it); no kernel runs
    from triton.runtime import driver

    driver.active.get_current_device()  # Triton's driver helpers (built on first use into its cache)

    return WarmupReply(status="ok", warmup_s=round(time.perf_counter() - started, 3))


def _l2_bytes() -> int:
    import torch

    return int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or 50 << 20)


def _cache_bytes() -> int:
    """The caches a cold sample must not find its data in: the device's L2 as torch reports it, or the target's
    catalogue figure when larger — MI300X / MI355X report a 4 MB L2 (one XCD's) but keep 256 MB of Infinity
    Cache behind it (catalogue ``cache_bytes``; written for ROCm, unverified on an AMD GPU)."""
    current = _PERSIST.case[0].cache_bytes if _PERSIST.case else None
    return max(_l2_bytes(), int(current or 0))


def _flusher() -> Any:
    from harness.device.timing import Flusher

    size = _cache_bytes()
    if _PERSIST.flusher_bytes != size:
        _PERSIST.flusher = None  # the old buffer freed before the new one is made
        _PERSIST.flusher, _PERSIST.flusher_bytes = Flusher(size), size
    return _PERSIST.flusher


def _rotated(state: CaseState) -> list[tuple[Any, ...]]:
    """Input copies to cycle through when the inputs fit in L2 (so no sample reads a warm L2)."""
    if state.rotated is None:
        nbytes = sum(t.numel() * t.element_size() for t in state.inputs if hasattr(t, "numel"))
        cache = _cache_bytes()
        copies = 1 if nbytes >= 2 * cache else min(8, math.ceil(2 * cache / max(nbytes, 1)))
        # tensors are copied; anything else an input tuple holds (None for an optional argument, a Python
        # scale factor) is shared
        state.rotated = [state.inputs] + [
            tuple(t.clone() if hasattr(t, "clone") else t for t in state.inputs) for _ in range(copies - 1)
        ]
    return state.rotated


def _restore(state: CaseState, inputs: tuple[Any, ...]) -> None:
    """Put back what an in-place kernel overwrote (a copy on the stream, before the flush and the timed launch)."""
    for i, saved in state.pristine.items():
        inputs[i].copy_(saved)


def _check_fault(exc: BaseException) -> None:
    import torch

    text = str(exc)
    broken = any(m in text for m in _FAULT_MARKERS)
    if not broken:
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            broken = True
    if broken:
        raise ContextLost(f"{type(exc).__name__}: {text[:1000]}") from exc


@dataclass(frozen=True)
class Rates:
    """A timing's rates and the work model they come from: the analysis decides the roof (harness.analysis.roofline)."""

    tflops: float
    gbps: float
    model: WorkModel


def _rates(spec: Any, shape: dict[str, int], dtype: str, median_us: float) -> Rates:
    seconds = median_us * 1e-6
    flops, nbytes = float(spec.flops(shape, dtype)), float(spec.min_bytes(shape, dtype))
    return Rates(flops / seconds / 1e12, nbytes / seconds / 1e9, WorkModel(flops=flops, bytes=nbytes))


# Screening: enough samples to rank configs (medians of 10+ flushed samples move ~1-2%), a
# tenth of the full budget; the finalists are then timed in full (see harness.tuning.gpu_phase.run_case).
SCREEN_MS, SCREEN_REPS = 10.0, (10, 25)  # a screen's target time, its fewest and most samples


def gpu_config(job: GpuConfigJob) -> ConfigReply:
    """Check one config at full size against the reference, then time it.

    ``job.stage``: ``"screen"`` (check, then a short timing), ``"final"`` (a config that
    passed its screen: full timing only) or ``"full"`` (check and full timing; the default).
    """
    from harness.device.timing import bench

    lap = Laps()
    state = _case(job)
    lap("case inputs")  # the case's inputs and reference: its first request makes them, later ones find them
    spec, shape, config = state.spec, dict(job.shape), dict(job.config)
    stage = job.stage
    result = ConfigReply(status="ok", stage=stage)
    if stage != "final":
        checked = _check_config(spec, state, shape, config, job.dtype, job.cache_key)
        lap("check")
        if checked.status != "ok":
            return checked.updated(spent_s=lap.spent)
        result = result.updated(
            correctness=checked.correctness,
            first_launch_s=checked.first_launch_s,
            launched_binary=checked.launched_binary,
        )
    rotated = _rotated(state)
    prepare = (lambda i: _restore(state, rotated[i])) if state.pristine else None
    measure = (
        functools.partial(bench, target_ms=SCREEN_MS, min_reps=SCREEN_REPS[0], max_reps=SCREEN_REPS[1])
        if stage == "screen"
        else bench
    )
    timing = measure(
        lambda i: lambda: spec.run(rotated[i], shape, config),
        len(rotated),
        _flusher(),
        settle_ms=_settle_ms(state),
        prepare=prepare,
    )
    lap(f"{stage} timing")
    rates = _rates(spec, shape, job.dtype, timing.median)
    return result.updated(
        timing=timing.updated(flush_bytes=_PERSIST.flusher_bytes),
        tflops=rates.tflops,
        gbps=rates.gbps,
        model=rates.model,
        spent_s=lap.spent,
    )


def _check_config(
    spec: Any, state: CaseState, shape: dict[str, int], config: dict[str, Any], dtype: str, cache_key: str = ""
) -> ConfigReply:
    """One launch into a poisoned output, compared with the reference; a failure is the config's result."""
    import torch

    from harness.authoring.correctness import poisoned_out

    kwargs = poisoned_out(spec, state.reference)
    _restore(state, state.inputs)
    before = _jit_kernels(spec.fn)
    started = time.perf_counter()
    try:
        out = spec.run(state.inputs, shape, config, **kwargs)
        torch.cuda.synchronize()
        first_launch_s = time.perf_counter() - started  # includes a JIT compile if the static one missed
        launched = _launched_binary(before, _jit_kernels(spec.fn), cache_key)
    except Exception as exc:  # noqa: BLE001 - each failure becomes this config's result
        _check_fault(exc)
        # refused at launch: Triton's resource check, or the driver through Triton's launcher
        # ("Triton Error [CUDA]: invalid argument" for a grid axis over its limit)
        refused = (
            "OutOfResources" in type(exc).__name__
            or "out of resource" in str(exc)
            or str(exc).startswith(("Triton Error [CUDA]", "Triton Error [HIP]"))
        )
        status = "launch_error" if refused else "error"
        return ConfigReply(status=status, error=f"{type(exc).__name__}: {str(exc)[:1000]}")
    check = compare_outputs(out, state.reference, spec, dtype)
    del out, kwargs
    if check.status != "ok":
        return ConfigReply(status="mismatch", error=check.error or "", correctness=check)
    return ConfigReply(status="ok", correctness=check, first_launch_s=first_launch_s, launched_binary=launched)


def _jit_kernels(fn: Any) -> dict[int, Any]:
    """The kernels Triton's JIT holds for ``fn`` (all devices), by identity."""
    found: dict[int, Any] = {}
    for caches in getattr(fn, "device_caches", {}).values():
        kernel_cache = caches[0] if isinstance(caches, tuple) else {}
        for kernel in list(kernel_cache.values()):
            found[id(kernel)] = kernel
    return found


def _launched_binary(before: dict[int, Any], after: dict[int, Any], cache_key: str = "") -> LaunchedBinary:
    """The binary Triton's JIT compiled (or loaded from its cache) for the launch just made.

    The static phase's artifact is compared with it (launch parity): the same
    sha256 means the static figures describe the kernel that really ran. A launch
    that found its kernel already in this worker's JIT cache (an earlier case with
    the same specialisation) is matched by Triton's cache key, ``cache_key``.
    """
    import hashlib

    def key_of(k: Any) -> str:
        return str(getattr(k.result() if hasattr(k, "result") else k, "hash", ""))

    new = [k for i, k in after.items() if i not in before]
    reused = ""
    if not new and cache_key:
        new = [k for k in after.values() if key_of(k) == cache_key]
        reused = "reused from an earlier launch in this worker"
    elif len(new) > 1 and cache_key:  # an op that launches one kernel twice (other constexprs): the one built here
        keyed = [k for k in new if key_of(k) == cache_key]
        if len(keyed) == 1:
            new, reused = keyed, f"one of the {len(new)} kernels the call compiled, by Triton's cache key"
    if len(new) != 1:
        return LaunchedBinary(
            note="no new JIT kernel for this launch (already compiled in this worker)"
            if not new
            else f"{len(new)} JIT kernels compiled by one launch"
        )
    kernel = new[0].result() if hasattr(new[0], "result") else new[0]
    asm = kernel.asm
    kind = next((k for k in ("cubin", "hsaco") if asm.get(k) is not None), None)
    if kind is None:
        return LaunchedBinary(note="the JIT kernel holds no cubin or hsaco")

    def sha(blob: Any) -> str:  # as compile.write_artifacts hashes an artifact
        return hashlib.sha256(blob if isinstance(blob, bytes) else str(blob).encode()).hexdigest()

    blob = asm[kind] if isinstance(asm[kind], bytes) else str(asm[kind]).encode()
    out = LaunchedBinary(
        kind=kind, sha256=sha(blob), code_sha256=code_digest(blob), cache_key=str(getattr(kernel, "hash", "") or "")
    )
    if reused:
        out = out.updated(note=reused)
    if asm.get("ttir") is not None:  # its hash and signature line (types, tt.* attributes) for a parity diagnosis
        out = out.updated(
            ttir_sha256=sha(asm["ttir"]),
            ttir_func=next(
                (line.strip()[:800] for line in str(asm["ttir"]).splitlines() if "tt.func public" in line), ""
            ),
        )
    return out
