"""Compiled capture: what TorchInductor generates for a function (or an ``nn.Module``) under one target's virtual
device, for one shape and dtype, as JSON the parent checks field by field.

Runs in a capture child that wears the target's face and Inductor's answers (:mod:`harness.intake.inductor.inductor_face`),
both put on before ``torch._dynamo`` is imported. The user's inputs function makes CUDA-faced tensors (as for an
``op:``); each becomes a FakeTensor on ``cuda`` of the same size, strides and dtype, and ``torch.compile`` (with
``fullgraph=True``: a graph break is an error naming it, not half a graph run eagerly) runs Inductor's real lowering,
scheduling, codegen and per-kernel config heuristics on them. Every kernel module Inductor writes is recorded with
its autotuner (its configs as Inductor's heuristics gave them on this vendor), and the compiled wrapper's call runs
on the fakes so each launch's arguments and its grid per config are recorded too. Nothing is compiled here: the
build stage builds each candidate from the kernel's source exactly as Inductor would
(:mod:`harness.compiling.compiled_build`).
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from harness.authoring import torchutil
from harness.intake.importing import import_attr
from harness.intake.inductor import compiled_check, compiled_regions, inductor_face, inductor_launches
from harness.intake.virtual_device import conv_layout, face, sdpa_dispatch


class CompiledCaptureError(Exception):
    """The function could not be compiled under the face (a graph break, an Inductor error); one line."""


def capture_table(ref: str, inputs_ref: str, shape: Mapping[str, Any], options: Mapping[str, Any], dtype: str,
                  mode: str | None, factory: bool, name: str = "", dynamic: bool = False) -> dict[str, Any]:  # fmt: skip
    """The kernels Inductor generates for ``ref`` (a function, or with ``factory`` a ``factory(shape, dtype)``
    returning an ``nn.Module``) at one shape and dtype, in launch order, with the template choices it listed. A failure
    is one line naming its innermost cause; ``name`` (the entry's) names the file its whole traceback is kept in.
    ``dynamic``: compiled for dynamic shapes (Inductor's symbolic kernels), launched at this shape."""
    import torch

    from harness.support import torchcompat

    FakeTensorMode = torchcompat.fake_tensor_mode()

    fn: Any = import_attr(ref)
    make_inputs: Any = import_attr(inputs_ref)
    generator = torch.Generator(device="cpu").manual_seed(0)
    where = "x".join(f"{k}{v}" for k, v in shape.items())
    try:
        faced = tuple(make_inputs(dict(shape), dtype, "cuda", generator))
    except Exception as exc:  # noqa: BLE001 - the user's inputs function: its own failure, named as such
        worn = face.worn()
        label = f"{name or ref.rpartition(':')[2]}-inputs-{worn.target if worn else 'host'}-{where}-{dtype}"
        raise CompiledCaptureError(f"the inputs function {inputs_ref.rpartition('/')[2]} raised "
                                   f"{_one_line(exc, label)}") from None  # fmt: skip
    torch_dtype = torchutil.torch_dtype(dtype)
    floats = [x.dtype for x in faced if isinstance(x, torch.Tensor) and x.dtype.is_floating_point]
    if floats and torch_dtype not in floats:  # mixed precision is the user's choice; none of the entry's is a slip
        given = ", ".join(sorted({str(d).removeprefix("torch.") for d in floats}))
        raise CompiledCaptureError(
            f"the inputs function gives {given} tensors for dtype {dtype}, none of {dtype}: Inductor would compile "
            f"the {given} kernels, not the {dtype} ones asked for (make the inputs in the dtype it is passed)"
        )
    started = time.monotonic()
    recorder = inductor_launches.fresh()
    sdpa_dispatch.CHOSEN.clear()
    conv_layout.CHOSEN.clear()
    kept: list[tuple[Any, Any]] = []

    def compile_and_call() -> None:
        torchcompat.dynamo().reset()
        with FakeTensorMode(allow_non_fake_inputs=True):
            args = tuple(_fake_like(x) for x in faced)
            target: Any = fn
            if factory:
                before = torch.get_default_dtype()
                torch.set_default_dtype(torch_dtype if torch_dtype.is_floating_point else before)
                try:
                    with torch.device("cuda"):
                        target = fn(dict(shape), dtype)
                finally:
                    torch.set_default_dtype(before)
            compile_ = compiled_regions.real_compile()  # not the faced op's lazy region: the fakes are made here
            compiled = compile_(
                target, fullgraph=True, dynamic=dynamic, options=inductor_face.compile_options(mode, options)
            )
            with torch.no_grad(), compiled_check.keeping_graphs() as graphs:
                compiled(*args)
            kept.extend(graphs)

    try:
        inductor_face.pop_face_mode(compile_and_call)
    except Exception as exc:  # noqa: BLE001 - Dynamo, Inductor and the user's code may raise anything
        worn = face.worn()
        label = f"{name or ref.rpartition(':')[2]}-{worn.target if worn else 'host'}-{where}-{dtype}"
        raise CompiledCaptureError(_one_line(exc, label)) from None
    if not recorder.kernels:
        raise CompiledCaptureError("Inductor generated no Triton kernel (all extern calls, or nothing to compute)")
    launched = inductor_launches.launch_order(recorder)
    checks = compiled_check.check_graph(
        kept, fn, make_inputs, shape, dtype, factory, {n: k.autotuner for n, k in launched}, tolerance(dtype), started
    )
    return {
        "torch": torch.__version__,
        "torch_checked": inductor_face.checked(torch.__version__),
        "kernels": [
            {**inductor_launches.kernel_table(name, k), "checks": [c.to_json() for c in checks[name]]}
            for name, k in launched
        ],
        "not_launched": sorted(n for n, k in recorder.kernels.items() if not k.launches),
        "choices": recorder.choices,
        # the SDPA backends this target's torch runs here (each traced call, once; Dynamo and AOT both trace it)
        "attention": list(dict.fromkeys(sdpa_dispatch.CHOSEN)),
        # the memory formats its convolutions' outputs take on this target (cuDNN's or MIOpen's rule)
        "conv_layout": list(dict.fromkeys(conv_layout.CHOSEN)),
        "policies": dict(inductor_face.POLICIES),
    }


def tolerance(dtype: str) -> tuple[float, float]:
    """(atol, rtol) a compiled entry's outputs are held to against eager: the kernels' default for the dtype."""
    from harness.authoring.spec import DEFAULT_TOLERANCES

    return DEFAULT_TOLERANCES.get(dtype, (1e-4, 1e-4))


def _fake_like(x: Any) -> Any:
    import torch

    if not isinstance(x, torch.Tensor):
        return x
    return torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device="cuda")


TRACEBACKS = inductor_face.TRACEBACKS  # the name the commands set (re-exported: they import it from here)


def innermost(exc: BaseException) -> BaseException:
    """The exception at the bottom of the chain: Dynamo wraps Inductor's error (``BackendCompilerFailed``, whose own
    text is one line naming the backend and no cause), which wraps the op or pass that failed."""
    seen = {id(exc)}
    while True:
        inner = getattr(exc, "inner_exception", None) or exc.__cause__ or exc.__context__
        if not isinstance(inner, BaseException) or id(inner) in seen:
            return exc
        seen.add(id(inner))
        exc = inner


def _one_line(exc: BaseException, label: str) -> str:
    """The innermost cause's kind and first line that says something, and where the whole traceback was kept."""
    cause = innermost(exc)
    lines = [ln.strip() for ln in str(cause).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("Set TORCHDYNAMO_VERBOSE", "from user code", "File "))]
    kind = type(cause).__name__
    if "graph break" in str(exc).lower() or type(exc).__name__ == "Unsupported":
        kind = "graph break"
    text = lines[0] if lines else ""
    line = f"{kind}: {text[:240]}" + ("..." if len(text) > 240 else "")
    kept = _keep_traceback(exc, label)
    return line + (f" (traceback: {kept})" if kept else "")


def _keep_traceback(exc: BaseException, label: str) -> str:
    import os
    import re
    import traceback
    from pathlib import Path

    folder = os.environ.get(TRACEBACKS)
    if not folder:
        return ""
    path = Path(folder) / (re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_")[:150] + ".txt")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
    except OSError:
        return ""
    return str(path)
