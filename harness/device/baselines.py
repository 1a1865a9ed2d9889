"""On-device work beside the configs': the kernel's baselines and the sustained, interleaved timings.

Requests of the same GPU worker as :mod:`harness.device.operations` (its case state, rotated inputs and
fault handling are shared): ``gpu_baselines`` checks and times each baseline in isolation,
refusing one that synchronises with the host, and names its device kernels; ``gpu_sustained`` times finalists and baselines
back to back in interleaved rounds (:mod:`harness.device.sustained`).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from harness.authoring.correctness import compare_outputs
from harness.device import graph_time
from harness.device.kernel_names import baseline_kernels
from harness.device.laps import Laps
from harness.device.operations import (
    _PERSIST,
    _case,
    _check_fault,
    _flusher,
    _jit_kernels,
    _rates,
    _restore,
    _rotated,
    _settle_ms,
)
from harness.model.jobs import BaselinesJob, SustainedJob
from harness.model.replies import BaselinesReply, SustainedEntry, SustainedReply
from harness.model.runtime import Baseline, DeviceInfo, GraphTime


def gpu_baselines(job: BaselinesJob) -> BaselinesReply:
    """Time the kernel's baselines on the case's inputs; measure copy bandwidth once per worker."""
    import torch

    from harness.device.detection import device_info
    from harness.device.timing import bench, measure_copy_tbps

    persist = _PERSIST
    lap = Laps()  # where the request's time goes, returned as ``spent_s``

    state = _case(job)
    lap("inputs")
    if persist.device is None:
        persist.device = DeviceInfo.from_json(device_info())
        lap("device info")
        persist.copy_tbps = measure_copy_tbps(flusher=_flusher())
        lap("copy bandwidth")
    spec, shape = state.spec, dict(job.shape)
    results: dict[str, Baseline] = {}
    env_before, inductor_before = dict(os.environ), "torch._inductor" in sys.modules
    for name, fn in spec.baselines.items():
        try:
            _restore(state, state.inputs)
            out = fn(state.inputs, shape)
            torch.cuda.synchronize()
            lap("first call")
            synced = _synchronises(lambda fn=fn: fn(state.inputs, shape))
            lap("sync check")
            if synced:
                results[name] = Baseline(
                    status="error",
                    error="synchronises with the host inside its timed region "
                    f"(torch.cuda sync debug mode: {synced}); a baseline must only enqueue work",
                )
                continue
            check = compare_outputs(out, state.reference, spec, job.dtype, floor=(1e-2, 1e-2), subset=True)
            rotated = _rotated(state)
            prepare = (lambda i: _restore(state, rotated[i])) if state.pristine else None
            lap("check")
            timing = bench(
                lambda i, fn=fn: lambda: fn(rotated[i], shape),  # type: ignore[misc]  # fn bound per baseline
                len(rotated),
                _flusher(),
                settle_ms=_settle_ms(state),
                prepare=prepare,
            )
            lap("isolated timing")
            kernels = baseline_kernels(
                [
                    job.ref,
                    name,
                    job.dtype,
                    sorted(shape.items()),
                    torch.__version__,
                    torch.cuda.get_device_name(),
                ],
                lambda fn=fn: fn(state.inputs, shape),  # type: ignore[misc]
            )
            lap("kernel names")
            rates = _rates(spec, shape, job.dtype, timing.median)
            results[name] = Baseline(
                status="ok",
                matches_reference=check.status == "ok",
                kernels=tuple(kernels),
                outputs_compared=tuple(sorted(check.outputs)) if check.outputs is not None else None,
                timing=timing,
                tflops=rates.tflops,
                gbps=rates.gbps,
                model=rates.model,
            )
        except Exception as exc:  # noqa: BLE001
            _check_fault(exc)
            results[name] = Baseline(status="error", error=f"{type(exc).__name__}: {str(exc)[:500]}")
    graph = None
    if spec.graph_call is not None:  # a compiled function's kernel: the call's device time by kernel
        try:
            graph = graph_time.measure(spec.graph_call(state.inputs, shape))
        except Exception as exc:  # noqa: BLE001 - the split is a figure beside the case's, never its failure
            _check_fault(exc)
            graph = GraphTime(error=f"{type(exc).__name__}: {str(exc)[:300]}")
        lap("graph time")
    out = BaselinesReply(
        status="ok",
        graph_time=graph,
        device=persist.device,
        copy_tbps=persist.copy_tbps,
        baselines=results,
        torch_settings=_torch_settings(),
        spent_s=lap.spent,
    )
    tainted = _process_changes(env_before, inductor_before)
    if tainted:
        # e.g. torch.compile: Inductor points TRITON_CACHE_DIR at its own cache and sets variables that change
        # Triton's code generation for every later compile in this process, while Triton's cache key for the
        # same request stays the same (measured: benchmarks/investigations/inductor_probe.py). Kernels compiled here from now on would
        # not be the ones the static phase built. The case's sustained timing still runs here (its configs were
        # loaded by their own checks before, and its baselines are compiled already: no second torch.compile);
        # that request retires the worker, and the GPU phase retires it if no such request follows.
        _PERSIST.tainted = tainted
        out = out.updated(tainted=tainted)
    return out


def _synchronises(call: Any) -> str:
    """'' when ``call`` only enqueues work; else what torch's sync debug mode caught (``.tolist()``, ``.item()``,
    a blocking copy): such a baseline's time would include host launch and defeat the spin lead."""
    import torch

    torch.cuda.set_sync_debug_mode("error")
    try:
        call()
        return ""
    except RuntimeError as exc:
        if "synchroniz" not in str(exc):
            raise
        return str(exc).splitlines()[0][:200]
    finally:
        torch.cuda.set_sync_debug_mode(0)
        torch.cuda.synchronize()


def gpu_sustained(job: SustainedJob) -> SustainedReply:
    """Time ``job.configs`` (name -> config) and ``job.baselines`` (names) back to back, in interleaved
    rounds (:mod:`harness.device.sustained`). An in-place kernel's inputs are not restored between launches here (each
    launch reads the last one's output, in place), and its timings say so."""
    from harness.device.sustained import Item, interleaved

    state = _case(job)
    spec, shape = state.spec, dict(job.shape)
    rotated = _rotated(state)
    items = [
        Item(f"config {name}", lambda i, c=config: lambda: spec.run(rotated[i], shape, c), len(rotated))  # type: ignore[misc]
        for name, config in ((n, dict(c)) for n, c in job.configs.items())
    ]
    items += [
        Item(f"baseline {name}", lambda i, fn=spec.baselines[name]: lambda: fn(rotated[i], shape), len(rotated))  # type: ignore[misc]
        for name in job.baselines
        if name in spec.baselines
    ]
    env_before, inductor_before = dict(os.environ), "torch._inductor" in sys.modules
    loaded = set(_jit_kernels(spec.fn))  # the configs' kernels, loaded by their own checks in this worker
    started = time.perf_counter()
    try:
        timed = interleaved(items)
        if _PERSIST.tainted and set(_jit_kernels(spec.fn)) - loaded:
            # a config compiled anew in a process a baseline changed: not the binary the static phase built
            why = f"compiled anew after {_PERSIST.tainted}: not the static binary, not timed"
            timed = {k: (why if k.startswith("config ") else v) for k, v in timed.items()}
    except Exception as exc:  # noqa: BLE001
        _check_fault(exc)
        failed = SustainedReply(status="error", error=f"{type(exc).__name__}: {str(exc)[:500]}")
        return _retiring(failed, env_before, inductor_before)
    note = "in place: inputs not restored between launches" if state.pristine else ""
    out: dict[str, SustainedEntry] = {}
    for name, t in timed.items():
        if isinstance(t, str):
            out[name] = SustainedEntry(status="error", error=t)
        else:
            timing = t.updated(note="; ".join(x for x in (t.note, note) if x)) if note else t
            out[name] = SustainedEntry(status="ok", timing=timing)
    reply = SustainedReply(status="ok", timings=out, spent_s={"sustained": round(time.perf_counter() - started, 3)})
    return _retiring(reply, env_before, inductor_before)


def _retiring(reply: SustainedReply, env_before: dict[str, str], inductor_before: bool) -> SustainedReply:
    """The sustained request's reply, retiring the worker when this request or the case's baselines before it
    changed the process (see :func:`gpu_baselines`)."""
    tainted = _process_changes(env_before, inductor_before) or _PERSIST.tainted
    return reply.updated(retire_worker=tainted) if tainted else reply


def _torch_settings() -> dict[str, bool | str]:
    """torch's precision switches the baselines ran under (they change which library kernels run, and how)."""
    import torch

    matmul = torch.backends.cuda.matmul
    return {
        "matmul.allow_tf32": bool(matmul.allow_tf32),
        "matmul.allow_fp16_reduced_precision_reduction": bool(matmul.allow_fp16_reduced_precision_reduction),
        "matmul.allow_bf16_reduced_precision_reduction": bool(matmul.allow_bf16_reduced_precision_reduction),
        "cudnn.allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
    }


def _process_changes(env_before: dict[str, str], inductor_before: bool) -> str:
    """What a baseline changed in this process that later Triton compiles would inherit ('' for nothing)."""
    changed = sorted(k for k in set(env_before) | set(os.environ) if env_before.get(k) != os.environ.get(k))
    parts = [f"environment variables changed: {', '.join(changed)}"] if changed else []
    if not inductor_before and "torch._inductor" in sys.modules:
        parts.append("torch._inductor imported")
    return "; ".join(parts)
