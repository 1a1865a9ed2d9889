"""Correctness on a CPU: run a kernel under ``TRITON_INTERPRET=1`` against its torch reference.

Runs inside an interpreter worker whose environment sets ``TRITON_INTERPRET=1``
before Triton is imported (with it set, ``@triton.jit`` builds interpreter
objects that cannot be cross-compiled, hence a separate process).
"""

from __future__ import annotations

import math
import time

from harness.authoring.correctness import compare_outputs, poisoned_out, reference_first
from harness.intake import loader
from harness.model.jobs import InterpretJob
from harness.model.replies import InterpretReply
from harness.model.runtime import Check, InterpretCorrectness
from harness.model.vocabulary import INTERPRET_UNSUPPORTED
from harness.support.interpreter_patches import interpreter_limitation


def interpret_job(job: InterpretJob) -> InterpretReply:
    """Run every interpret shape of one (kernel, dtype, config) as the device path does: shapes the spec's
    ``config_ok`` refuses are skipped, outputs are NaN-poisoned ``out`` buffers where ``launch`` takes them. A
    mismatch fails; an interpreter limitation is :data:`INTERPRET_UNSUPPORTED`, with the reason, not the kernel's error."""
    import torch

    from harness.support.interpreter_patches import as_launcher

    spec = loader.load(job.ref)
    start = time.perf_counter()
    checks: list[Check] = []
    for shape in (dict(s) for s in job.shapes):
        if not spec.config_ok(dict(shape), dict(job.config)):
            checks.append(Check(shape=shape, status="skipped", reason="config_ok is False for this shape"))
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
            return _unsupported(why, start, checks)
        checks.append(compare_outputs(out, ref, spec, job.dtype).updated(shape=shape))
    ran = [c for c in checks if c.status != "skipped"]
    if not ran:
        return _unsupported("config_ok refuses this config for every interpret shape", start, checks)
    status = "ok" if all(c.status == "ok" for c in ran) else "mismatch"
    worst = max((math.inf if c.max_abs_err is None else c.max_abs_err for c in ran), default=0.0)
    return InterpretReply(
        status=status,
        error="; ".join(f"{c.shape}: {c.error}" for c in ran if c.status != "ok") if status != "ok" else None,
        run_s=round(time.perf_counter() - start, 4),
        correctness=InterpretCorrectness(mode="interpreter", checks=tuple(checks), max_abs_err=worst),
    )


def _unsupported(why: str, start: float, checks: list[Check]) -> InterpretReply:
    return InterpretReply(
        status=INTERPRET_UNSUPPORTED,
        error=why,
        run_s=round(time.perf_counter() - start, 4),
        correctness=InterpretCorrectness(mode="interpreter", checks=tuple(checks)),
    )
