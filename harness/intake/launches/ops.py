"""Ops captured, not described: a kernel spec made from the Triton launches of a library's PyTorch-level op.

A matrix entry with ``op:`` (the library's function), ``inputs:`` (``(shape, dtype, device, generator) -> args``)
and optionally ``reference:`` (same args, the torch result) has no hand-written spec. Per shape and dtype the op
runs once in capture mode (:mod:`harness.intake.launches.capture`: launches recorded and not run), in a process that wears
the build target's virtual device (:mod:`harness.intake.virtual_device.face`), so what is recorded is that vendor's launch. Each
distinct launch of a kernel becomes a :class:`~harness.authoring.spec.KernelSpec` whose ``fn`` is the JIT function
and whose every argument is what the op passed for that shape and config — tensors as pointers of their dtype and
storage size, scalars by value, constexprs (the op's, its heuristics') fixed — and whose space is what the op
launches: the autotuner's configs as Triton pruned them under the face, or the op's own options. On a GPU a config
is run by calling the op with that config forced on the kernel's autotuner; the op as shipped (its own autotuning)
is the baseline, and the reference where the entry gives none.

A reference (:class:`harness.model.kernel_refs.OpRef`) names the op, inputs and reference, the kernel, its launch's
order among the op's launches of it, and the shape and dtype the spec's defaults are taken from, so every worker
rebuilds the same spec from the case alone.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping, cast

from harness.authoring.spec import TRITON_DTYPES, KernelSpec, Pointer, Scalar, TensorDesc
from harness.intake.inductor import compiled_regions
from harness.intake.launches.capture import CaptureError, KernelLaunch, capture
from harness.model.kernel_refs import OpRef

_TORCH_NAMES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e4m3fnuz": "fp8e4b8",
    "float8_e5m2": "fp8e5",
    "float8_e5m2fnuz": "fp8e5b16",
}


def _attr(ref: str) -> Callable[..., Any]:
    from harness.intake.importing import import_attr

    return cast(Callable[..., Any], import_attr(ref))


@lru_cache(maxsize=64)
def _captured(
    op_ref: str, inputs_ref: str, shape: tuple[tuple[str, Any], ...], dtype: str, check: bool = False
) -> tuple[tuple[KernelLaunch, ...], Any, str, tuple[dict[str, Any], ...]]:
    """(the op's distinct launches, its result, the device that served, the kernels its ``torch.compile`` regions
    launched, as a compiled entry's capture gives them: with ``check``, each config checked on the host)."""
    import time

    from harness.intake.inductor import region_check
    from harness.intake.virtual_device import face

    faced = face.worn() is not None
    started = time.monotonic()
    op, make_inputs = _attr(op_ref), _attr(inputs_ref)
    found, result, _inputs, device = capture(op, make_inputs, dict(shape), dtype, faced)
    if check:
        regions = region_check.tables(op, make_inputs, dict(shape), dtype, bool(found), started)
    else:
        regions = compiled_regions.kernels()
    return tuple(found), result, device, tuple(regions)


def launch_table(op_ref: str, inputs_ref: str, shape: Mapping[str, Any], dtype: str) -> dict[str, Any]:
    """What the op launches for one shape and dtype, JSON-friendly: ``{"device": ..., "launches": [{"kernel",
    "launch", "of", "tuned", "configs"}], "compiled": [...]}`` in the op's order; ``compiled``: the kernels its
    ``torch.compile`` regions launch (Inductor's, as on this target), each config checked on the host. Raises
    :class:`CaptureError` in one line."""
    found, _, device, regions = _captured(op_ref, inputs_ref, tuple(shape.items()), dtype, True)
    return {
        "device": device,
        "compiled": list(regions),
        "launches": [
            {"kernel": k.name, "launch": k.ordinal, "of": k.of, "tuned": k.tuned, "configs": _jsonable(k.configs)}
            for k in found
        ],
    }


def _jsonable(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for c in configs:
        for key, value in c.items():
            if not isinstance(value, (bool, int, float, str)) and value is not None:
                raise CaptureError(f"config value {key}={value!r} ({type(value).__name__}) cannot be recorded")
        out.append(dict(c))
    return out


def _kernel_launch(ref: OpRef, shape: Mapping[str, Any], dtype: str) -> KernelLaunch:
    found, _, _, _ = _captured(ref.op, ref.inputs, tuple((k, shape[k]) for k, _ in ref.shape), dtype)
    for k in found:
        if k.name == ref.kernel and k.ordinal == ref.launch:
            return k
    made = ", ".join(f"{k.name} (launch {k.ordinal} of {k.of})" for k in found)
    raise CaptureError(
        f"the op makes no launch {ref.launch} of {ref.kernel!r} for shape {dict(shape)} and dtype {dtype} "
        f"(it makes {made})"
    )


def _dtype_name(torch_dtype: Any) -> str:
    name = str(torch_dtype).removeprefix("torch.")
    return _TORCH_NAMES.get(name, name)


def describe(value: Any) -> Pointer | Scalar | TensorDesc | None:
    """What the launcher sees of one runtime argument, in the spec's terms."""
    import torch

    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        size = value.element_size()
        numel = value.untyped_storage().nbytes() // size
        offset = value.storage_offset() * size
        align = 16 if offset % 16 == 0 else offset & -offset
        return Pointer(_dtype_name(value.dtype), int(numel), int(align))
    if isinstance(value, bool):
        return Scalar("i1", int(value))
    if isinstance(value, int):
        return Scalar("i32" if -(2**31) <= value < 2**31 else "i64", value)
    if isinstance(value, float):
        return Scalar("fp32", value)
    base = getattr(value, "base", None)
    if isinstance(base, torch.Tensor) and hasattr(value, "block_shape"):  # a host TensorDescriptor
        return TensorDesc(_dtype_name(base.dtype), tuple(value.shape), tuple(value.block_shape), tuple(value.strides))
    raise CaptureError(f"an argument of type {type(value).__name__} cannot be described for a compile")


def spec_for(ref: OpRef) -> KernelSpec:
    """The spec of one captured launch (cached per reference by :func:`harness.intake.loader.load`)."""
    from harness.authoring.decorated import forced
    from harness.intake.virtual_device import face

    op = _attr(ref.op)
    first = _kernel_launch(ref, dict(ref.shape), ref.dtype)
    # under the interpreter a kernel is an InterpretedFunction (no params): nothing is compiled there, the op runs
    params = getattr(first.jit, "params", [])

    def launch_of(shape: Mapping[str, Any], dtype: str, config: Mapping[str, Any] | None) -> Any:
        return _kernel_launch(ref, shape, dtype).launch_for(config)

    def runtime_args(shape: Mapping[str, Any], dtype: str, config: Mapping[str, Any] | None = None) -> dict:
        args = launch_of(shape, dtype, config).args
        return {p.name: describe(args[p.name]) for p in params if not p.is_constexpr and p.name in args}

    def fixed_constexprs(shape: Mapping[str, Any], dtype: str, config: Mapping[str, Any] | None = None) -> dict:
        tuned = set(config or ())
        args = launch_of(shape, dtype, config).args
        return {p.name: args[p.name] for p in params if p.is_constexpr and p.name in args and p.name not in tuned}

    def grid(shape: Mapping[str, Any], config: Mapping[str, Any]) -> tuple[int, ...]:
        launch = launch_of(shape, ref.dtype, config)
        g = launch.grid(dict(launch.args, **config)) if callable(launch.grid) else launch.grid
        return tuple(g)

    def run_op(args: tuple, shape: Mapping[str, Any], config: Mapping[str, Any]) -> Any:
        if not first.tuned:
            return _as_output(op(*args))
        with forced(first.outer, config, first.tunables):
            return _as_output(op(*args))

    inputs = _attr(ref.inputs)
    reference = _attr(ref.reference) if ref.reference else op
    found, result, device, regions = _captured(ref.op, ref.inputs, ref.shape, ref.dtype)
    worn = face.worn()
    captured = {
        "op": ref.op,
        "device": device,
        "face": worn.target if worn else None,
        "face_answers": worn.answers() if worn else None,
        "launch": first.ordinal,
        "of": first.of,
        "tuned": first.tuned,
        "launches": sum(len(k.calls) for k in found),  # every call the op makes, repeats too
        "distinct_launches": len(found),  # what is built: a repeat of an identical launch is one build
        "repeated": [f"{k.name} launch {k.ordinal}: calls {', '.join(map(str, k.calls))}" for k in found if k.repeats],
        "kernels": sorted({k.name for k in found}),
        **({"compiled_kernels": [k["name"] for k in regions]} if regions else {}),
    }
    outputs = tuple(f"out{i}" for i in range(len(result))) if isinstance(result, (tuple, list)) else ()
    label = getattr(op, "__name__", "op")
    return KernelSpec(
        name=ref.kernel,
        fn=first.jit,
        dims=tuple(k for k, _ in ref.shape),
        dtypes=tuple(TRITON_DTYPES),
        tunables=first.tunables,
        runtime_args=runtime_args,
        fixed_constexprs=fixed_constexprs,
        grid=grid,
        nvidia_configs=tuple(first.configs),
        amd_configs=tuple(first.configs),
        make_inputs=inputs,
        launch=run_op,
        reference=lambda args, shape: _as_output(reference(*args)),
        outputs=outputs,
        baselines={f"{label} as shipped": lambda args, shape: _as_output(op(*args))},
        captured=captured,
    )


def _as_output(result: Any) -> Any:
    return tuple(result) if isinstance(result, list) else result
