"""Correctness on a CPU: run a kernel under ``TRITON_INTERPRET=1`` against its torch reference.

Runs inside an interpreter worker whose environment sets ``TRITON_INTERPRET=1``
before Triton is imported (with it set, ``@triton.jit`` builds interpreter
objects that cannot be cross-compiled, hence a separate process).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from harness.matrix import loader
from harness.model.jobs import InterpretJob
from harness.model.vocabulary import INTERPRET_UNSUPPORTED


def compare(out: Any, ref: Any, atol: float, rtol: float) -> dict[str, Any]:
    """Element-wise check; a NaN or Inf in the output that the reference lacks always fails."""
    import torch

    o, r = out.detach().float(), ref.detach().float().to(out.device)  # on the output's device: GPU-sized checks
    if o.shape != r.shape:
        return {"status": "mismatch", "error": f"shape {tuple(o.shape)} != reference {tuple(r.shape)}"}
    bad_nonfinite = int((~torch.isfinite(o) & torch.isfinite(r)).sum())
    diff = (o - r).abs()
    finite = torch.isfinite(diff)
    max_abs = float(diff[finite].max()) if bool(finite.any()) else 0.0
    allowed = atol + rtol * r.abs()
    n_bad = int((~(diff <= allowed)).sum())
    del diff, allowed, finite
    result: dict[str, Any] = {
        "max_abs_err": max_abs,
        "mismatched": n_bad,
        "nonfinite": bad_nonfinite,
        "elements": int(o.numel()),
        "atol": atol,
        "rtol": rtol,
    }
    result["status"] = "ok" if n_bad == 0 and bad_nonfinite == 0 else "mismatch"
    if result["status"] != "ok":
        result["error"] = (
            f"{n_bad} of {o.numel()} elements outside atol={atol:g} rtol={rtol:g} "
            f"(max abs err {max_abs:.3g}, {bad_nonfinite} non-finite)"
        )
    return result


def output_items(value: Any, names: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """The outputs of a launch or reference as (name, tensor): one tensor, a tuple (named by ``names``), a dict."""
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, (tuple, list)):
        return [(names[i] if i < len(names) else str(i), v) for i, v in enumerate(value)]
    return [("out", value)]


def map_outputs(value: Any, fn: Any) -> Any:
    """``fn`` applied to each tensor of an output structure, the structure kept (poisoned ``out`` buffers)."""
    if isinstance(value, dict):
        return {k: fn(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(fn(v) for v in value)
    return fn(value)


def compare_outputs(
    out: Any, ref: Any, spec: Any, dtype: str, floor: tuple[float, float] = (0.0, 0.0), subset: bool = False
) -> dict[str, Any]:
    """Each output against its reference with its own tolerance; the totals at the top, each output under ``outputs``.

    ``floor`` raises every tolerance to at least (atol, rtol) and ``subset`` compares only the outputs
    ``out`` has (baselines: checked loosely, and a library call need not produce every output the kernel
    writes, e.g. torch's RMSNorm returns no RSTD — timing it alone keeps the comparison fair).
    """

    def tol(name: str | None) -> tuple[float, float]:
        atol, rtol = spec.tolerance(dtype, name)
        return max(atol, floor[0]), max(rtol, floor[1])

    refs = output_items(ref, spec.outputs)
    if len(refs) == 1 and not isinstance(ref, (dict, tuple, list)):
        if isinstance(out, (dict, tuple, list)):
            return {"status": "mismatch", "error": f"launch returned {len(out)} outputs, the reference one"}
        return compare(out, ref, *tol(None))
    got = dict(output_items(out, spec.outputs)) if isinstance(out, (dict, tuple, list)) else {}
    if subset and got and set(got) <= {name for name, _ in refs}:
        refs = [(name, r) for name, r in refs if name in got]
    if set(got) != {name for name, _ in refs}:
        return {
            "status": "mismatch",
            "error": f"outputs {sorted(got) or ['one tensor']} != reference {sorted(name for name, _ in refs)}",
        }
    checks = {name: compare(got[name], r, *tol(name)) for name, r in refs}
    result: dict[str, Any] = {
        "max_abs_err": max(c.get("max_abs_err", math.inf) for c in checks.values()),
        "mismatched": sum(c.get("mismatched", 0) for c in checks.values()),
        "nonfinite": sum(c.get("nonfinite", 0) for c in checks.values()),
        "elements": sum(c.get("elements", 0) for c in checks.values()),
        "outputs": checks,
    }
    bad = [f"{name}: {c['error']}" for name, c in checks.items() if c["status"] != "ok"]
    result["status"] = "mismatch" if bad else "ok"
    if bad:
        result["error"] = "; ".join(bad)
    return result


def reference_first(spec: Any, inputs: tuple[Any, ...], shape: Any) -> Any:
    """The reference, computed before the kernel runs; on copies of the inputs the kernel overwrites."""
    safe = tuple(t.clone() if i in spec.inplace else t for i, t in enumerate(inputs))
    return spec.reference(safe, shape)


UNSUPPORTED = INTERPRET_UNSUPPORTED  # the name this module's callers know


def interpreter_limitation(exc: BaseException) -> str:
    """Why ``exc`` is a limitation of Triton's CPU interpreter rather than the kernel's fault ('' when it is the
    kernel's): a ``TypeError``, ``AttributeError`` or ``NotImplementedError`` raised inside the triton package
    while it interprets (an op or argument kind it does not emulate: a libdevice function left a stub, an extern
    call, an fp8 dot). Raised in the kernel's own code, or of another kind (a ``static_assert``, an index
    error), it stays the kernel's."""
    import traceback

    cause = exc.__cause__ if type(exc).__name__ == "InterpreterError" and exc.__cause__ is not None else exc
    if not isinstance(cause, (TypeError, AttributeError, NotImplementedError)):
        return ""
    exc = cause
    frames = traceback.extract_tb(exc.__traceback__)
    import triton

    root = Path(triton.__file__).parent.as_posix() + "/"
    if not frames or not Path(frames[-1].filename).as_posix().startswith(root):
        return ""  # raised in the kernel's own code: the kernel's error
    where = next(
        (f.name for f in reversed(frames) if "runtime/interpreter" in Path(f.filename).as_posix()), frames[-1].name
    )
    return f"{type(exc).__name__} in Triton's interpreter ({where}): {str(exc)[:200]}"


def poisoned_out(spec: Any, reference: Any) -> dict[str, Any]:
    """``{"out": ...}`` of NaN-filled buffers (-1 for integers) shaped as the reference, when ``launch`` takes
    ``out``: an element the kernel never writes then fails the check, on a CPU as on a device."""
    import inspect

    import torch

    if spec.launch is None or "out" not in inspect.signature(spec.launch).parameters:
        return {}
    return {"out": map_outputs(reference, lambda r: torch.full_like(r, float("nan") if r.is_floating_point() else -1))}


def interpret_job(job: InterpretJob) -> dict[str, Any]:
    """Run every interpret shape of one (kernel, dtype, config) as the device path does: shapes the spec's
    ``config_ok`` refuses are skipped, outputs are NaN-poisoned ``out`` buffers where ``launch`` takes them. A
    mismatch fails; an interpreter limitation is :data:`UNSUPPORTED`, with the reason, not the kernel's error."""
    import torch

    from harness.device.interpreter_patches import as_launcher

    spec = loader.load(job.ref)
    start = time.perf_counter()
    checks: list[dict[str, Any]] = []
    for shape in (dict(s) for s in job.shapes):
        if not spec.config_ok(dict(shape), dict(job.config)):
            checks.append({"shape": shape, "status": "skipped", "reason": "config_ok is False for this shape"})
            continue
        gen = torch.Generator().manual_seed(job.seed)
        inputs = spec.inputs(shape, job.dtype, "cpu", gen)
        ref = reference_first(spec, inputs, shape)
        try:
            with as_launcher():  # float scalars as the launcher types them, libdevice computed (see the module)
                out = spec.run(inputs, shape, dict(job.config), **poisoned_out(spec, ref))
        except Exception as exc:  # noqa: BLE001 - a limitation of the interpreter is not the kernel's failure
            why = interpreter_limitation(exc)
            if not why:
                raise
            return {
                "status": UNSUPPORTED,
                "error": why,
                "run_s": round(time.perf_counter() - start, 4),
                "correctness": {"mode": "interpreter", "checks": checks},
            }
        check = compare_outputs(out, ref, spec, job.dtype)
        check["shape"] = shape
        checks.append(check)
    ran = [c for c in checks if c["status"] != "skipped"]
    if not ran:
        return {
            "status": UNSUPPORTED,
            "error": "config_ok refuses this config for every interpret shape",
            "run_s": round(time.perf_counter() - start, 4),
            "correctness": {"mode": "interpreter", "checks": checks},
        }
    status = "ok" if all(c["status"] == "ok" for c in ran) else "mismatch"
    worst = max((c.get("max_abs_err", math.inf) for c in ran), default=0.0)
    record = {
        "status": status,
        "run_s": round(time.perf_counter() - start, 4),
        "correctness": {"mode": "interpreter", "checks": checks, "max_abs_err": worst},
    }
    if status != "ok":
        record["error"] = "; ".join(f"{c['shape']}: {c['error']}" for c in ran if c["status"] != "ok")
    return record
