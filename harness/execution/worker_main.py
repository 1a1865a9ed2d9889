"""Entry point of a worker process: JSON requests in on stdin, JSON results out.

The protocol channel is a private duplicate of the original stdout; file
descriptor 1 is pointed at stderr so that anything a compiler or kernel prints
cannot corrupt it. A request that raises gets an ``error`` reply and the
worker lives on; one that kills the process is reported by the parent.
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback
from typing import Any

from harness.model.jobs import (
    AgreementJob,
    BaselinesJob,
    CompileJob,
    GpuConfigJob,
    InterpretJob,
    WarmupJob,
    from_wire,
)
from harness.model.replies import Reply


def _handle(request: dict[str, Any]) -> Reply | dict[str, int]:
    """The reply to one request: control ops by name (their answer is the worker's pid), every job decoded as its
    class and dispatched on it, answered with the job's reply class (:mod:`harness.model.replies`)."""
    op = request["op"]
    if op == "ping":
        return {"pid": os.getpid()}
    if op == "warm":  # pay the imports and Triton's own key a compile needs before the first compile arrives
        import triton  # noqa: F401

        from harness.compiling import compile  # noqa: F401
        from harness.support import tritoncompat

        tritoncompat.warm_compiler()

        return {"pid": os.getpid()}
    job = from_wire(op, request["job"])
    if isinstance(job, CompileJob):
        from harness.model.kernel_refs import InductorRef, decode

        if isinstance(decode(job.ref), InductorRef):  # Inductor's kernel: built with Inductor's own steps and options
            from harness.compiling import compiled_build

            return compiled_build.compile_job(job)
        from harness.compiling.compile import compile_job

        return compile_job(job)
    if isinstance(job, InterpretJob):
        from harness.device.interpret import interpret_job

        return interpret_job(job)
    if isinstance(job, AgreementJob):
        from harness.execution.agreement import agreement_job

        return agreement_job(job)
    from harness.device import baselines, operations

    if isinstance(job, GpuConfigJob):
        return operations.gpu_config(job)
    if isinstance(job, WarmupJob):
        return operations.gpu_warmup(job)
    if isinstance(job, BaselinesJob):
        return baselines.gpu_baselines(job)
    return baselines.gpu_sustained(job)


def describe(exc: BaseException) -> str:
    """One error text that keeps the cause: Triton's CompilationError names the call site while the
    reason sits in its chained cause (e.g. ``AttributeError`` in a helper); the root cause comes first."""
    chain = [exc]
    while len(chain) < 8:
        nxt = chain[-1].__cause__ or (None if chain[-1].__suppress_context__ else chain[-1].__context__)
        if nxt is None or nxt in chain:
            break
        chain.append(nxt)
    root = chain[-1]
    head = f"{type(root).__name__}: {str(root).strip()}" if len(chain) > 1 else ""
    if type(root).__name__ == "CompilationError" and root.args:
        # its message is the source excerpt; its last argument is the error it wraps (an exception, or its repr)
        wrapped = root.args[-1]
        found = re.match(r"^(\w+)\((['\"])(.*)\2\)$", str(wrapped), re.S) if isinstance(wrapped, str) else None
        if isinstance(wrapped, BaseException):
            head = f"{type(wrapped).__name__}: {wrapped}"
        elif found:
            head = f"{found.group(1)}: {found.group(3)}"
        elif wrapped:
            head = str(wrapped)
    text = f"{type(exc).__name__}: {exc}".strip()
    return ((head + "\n" if head else "") + text)[:3000]


def main() -> None:
    from harness.support.lifeline import watch_parent

    watch_parent()  # a worker busy in a hung compile still ends with the harness
    if os.environ.get("HARNESS_FACE"):  # a captured op's builds for one target: its library imported as there
        from harness.intake.virtual_device import face

        face.wear_from_env()
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        lost = False
        line_out: dict[str, object]
        try:
            answer = _handle(json.loads(line))
            lost = isinstance(answer, Reply) and bool(answer.retire_worker)
            line_out = {"ok": True, "result": answer.to_json() if isinstance(answer, Reply) else answer}
        except Exception as exc:  # noqa: BLE001 - every failure becomes that request's record
            lost = type(exc).__name__ == "ContextLost"
            line_out = (
                {"ok": True, "result": Reply.failed("fault", str(exc)[:2000]).to_json()}
                if lost
                else {"ok": False, "error": describe(exc), "traceback": traceback.format_exc()[-8000:]}
            )
        channel.write(json.dumps(line_out) + "\n")
        channel.flush()
        if lost:  # a poisoned GPU context (or a process a baseline changed) cannot serve another request
            os._exit(3)
    _leave()


def _leave() -> None:
    """The harness closed our input: every reply is written. A worker that never touched a GPU exits at once;
    tearing down torch and Triton's modules would cost the run about half a second per worker, for nothing. A GPU
    worker exits the ordinary way, so the driver and any profiler attached see the context end as usual. Its
    scratch folder goes first: the input also closes when the harness was killed (a zygote's child, whose
    lifeline watches the zygote), and then nobody else removes it."""
    from harness.support.lifeline import remove_scratch

    remove_scratch()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
