"""Does the spec's ``launch`` pass what its ``runtime_args`` declare? Checked on a CPU, by ``harness validate``.

The cross-compile builds the kernel from ``runtime_args`` (and ``fixed_constexprs``); the device and the
interpreter run ``launch``. Where the two disagree — another stride, a tensor of another dtype or size, a
scalar where a pointer was declared, another constexpr — the static figures describe a kernel that never
runs, and only the GPU's launch-parity check would notice. Here one launch of the first interpret shape is
captured in an interpreter worker (``TRITON_INTERPRET=1``): the JIT function's ``run`` records its arguments
and stops, so nothing executes, and each argument is compared with its declaration.
"""

from __future__ import annotations

from typing import Any

from harness.intake import facts, loader
from harness.model.jobs import AgreementJob
from harness.model.replies import AgreementReply


class _Captured(Exception):
    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        super().__init__("captured")
        self.args_, self.kwargs = args, kwargs


def _disagreement(name: str, declared: Any, passed: Any) -> str:
    """'' when ``passed`` (what launch gave) fits ``declared`` (a RuntimeArg, None, or a constexpr value)."""
    from harness.authoring.spec import Pointer, Scalar, TensorDesc

    if isinstance(declared, TensorDesc):
        return ""
    if isinstance(declared, Pointer):
        if not hasattr(passed, "data_ptr"):
            return f"{name}: runtime_args declares a {declared.dtype} tensor, launch passes {type(passed).__name__}"
        from triton.runtime.jit import mangle_type

        got = mangle_type(passed).lstrip("*")
        if got != declared.dtype.lstrip("*"):
            return f"{name}: runtime_args declares {declared.dtype}, launch passes a {got} tensor"
        if declared.numel is not None and passed.numel() != declared.numel:
            return f"{name}: runtime_args declares {declared.numel} elements, launch passes {passed.numel()}"
        return ""
    if isinstance(declared, Scalar):
        if hasattr(passed, "data_ptr") or passed is None:
            return f"{name}: runtime_args declares the scalar {declared.value!r}, launch passes {type(passed).__name__}"
        floating = declared.type.lstrip("*").startswith(("fp", "bf"))
        if floating != isinstance(passed, float):  # the launcher types a Python int as an integer, a float as fp32
            return (
                f"{name}: runtime_args declares a {declared.type} scalar, launch passes "
                f"{type(passed).__name__} {passed!r}"
            )
        # a float's value never changes the build; an integer's does (1 and multiples of 16 are specialised)
        return (
            ""
            if floating or passed == declared.value
            else f"{name}: runtime_args declares {declared.value!r}, launch passes {passed!r}"
        )
    if declared is None:
        return "" if passed is None else f"{name}: runtime_args declares None, launch passes {type(passed).__name__}"
    return "" if passed == declared else f"{name}: the spec gives {declared!r}, launch passes {passed!r}"


def agreement_job(job: AgreementJob) -> AgreementReply:
    """In an interpreter worker: capture one launch of ``job`` and list each argument that disagrees."""
    import torch

    spec = loader.load(job.ref)
    shape, dtype, config = dict(job.shape), job.dtype, dict(job.config)
    inputs = spec.inputs(shape, dtype, "cpu", torch.Generator().manual_seed(0))
    jit = spec.fn

    def capture(*args: Any, **kwargs: Any) -> Any:
        raise _Captured(args, kwargs)

    jit.run = capture  # an instance attribute: this worker's copy only, and the launch never executes
    try:
        spec.run(inputs, shape, config)
    except _Captured as got:
        passed = dict(zip(jit.arg_names, got.args_))
        passed.update({k: v for k, v in got.kwargs.items() if k in jit.arg_names})
    else:
        return AgreementReply(status="ok", problems=(), note="launch made no Triton launch")
    finally:
        del jit.run
    meta, _ = spec.split_config(config)
    runtime, fixed = spec.args_for(shape, dtype, None, meta)
    problems = [
        p
        for name, value in passed.items()
        for p in [
            _disagreement(name, runtime[name], value)
            if name in runtime
            else _disagreement(name, fixed[name], value)
            if name in fixed
            else ""
        ]
        if p
    ]
    return AgreementReply(status="ok", problems=tuple(problems))


def disagreements(matrix: Any) -> list[str]:
    """One line per argument a kernel's ``launch`` passes otherwise than its spec declares (harness.execution.agreement),
    from one captured launch of its first interpret shape in an interpreter worker."""
    from harness.execution.pool import Workers

    entries = [e for e in matrix.kernels if e.interpret and e.configs]
    if not entries:
        return []
    out = []
    pool = Workers()
    try:
        for e in entries:
            spec = facts.get(e.ref, e.import_env)
            if spec.compile_only:
                continue
            job = AgreementJob(
                e.ref,
                next((d for d in e.dtypes if spec.interpretable(d)), e.dtypes[0]),
                dict(e.interpret[0]),
                e.configs[0].as_dict(),
            )
            reply = AgreementReply.of(pool.get("interpret", import_env=e.import_env).send(job, e.timeout_s))
            if reply.status != "ok":
                continue  # a launch that cannot run on a CPU is the interpreter check's to report, not validate's
            out += [f"kernel {e.name}: spec and launch disagree: {p}" for p in reply.problems or ()]
    finally:
        pool.close()
    return out
