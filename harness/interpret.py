"""Correctness on a CPU: run a kernel under ``TRITON_INTERPRET=1`` against its torch reference.

Runs inside an interpreter worker whose environment sets ``TRITON_INTERPRET=1``
before Triton is imported (with it set, ``@triton.jit`` builds interpreter
objects that cannot be cross-compiled, hence a separate process).
"""
from __future__ import annotations

import math
import time
from typing import Any

from harness import loader


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
    result = {"max_abs_err": max_abs, "mismatched": n_bad, "nonfinite": bad_nonfinite,
              "elements": int(o.numel()), "atol": atol, "rtol": rtol}
    result["status"] = "ok" if n_bad == 0 and bad_nonfinite == 0 else "mismatch"
    if result["status"] != "ok":
        result["error"] = (f"{n_bad} of {o.numel()} elements outside atol={atol:g} rtol={rtol:g} "
                           f"(max abs err {max_abs:.3g}, {bad_nonfinite} non-finite)")
    return result


def interpret_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run every interpret shape of one (kernel, dtype, config); fail on the first mismatch."""
    import torch

    spec = loader.load(job["ref"])
    atol, rtol = spec.tolerance(job["dtype"])
    start = time.perf_counter()
    checks = []
    for shape in job["shapes"]:
        gen = torch.Generator().manual_seed(int(job.get("seed", 0)))
        inputs = spec.make_inputs(shape, job["dtype"], "cpu", gen)
        out = spec.launch(inputs, shape, job["config"])
        ref = spec.reference(inputs, shape)
        check = compare(out, ref, atol, rtol)
        check["shape"] = shape
        checks.append(check)
    status = "ok" if all(c["status"] == "ok" for c in checks) else "mismatch"
    worst = max((c.get("max_abs_err", math.inf) for c in checks), default=0.0)
    record = {"status": status, "run_s": round(time.perf_counter() - start, 4),
              "correctness": {"mode": "interpreter", "checks": checks, "max_abs_err": worst}}
    if status != "ok":
        record["error"] = "; ".join(f"{c['shape']}: {c['error']}" for c in checks if c["status"] != "ok")
    return record
