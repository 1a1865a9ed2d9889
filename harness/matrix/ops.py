"""Ops captured, not described: a kernel spec made from the Triton launches of a library's PyTorch-level op.

A matrix entry with ``op:`` (the library's function), ``inputs:`` (``(shape, dtype, device, generator) -> args``)
and optionally ``reference:`` (same args, the torch result) has no hand-written spec. Per shape and dtype the op
runs once in capture mode (:mod:`harness.matrix.capture`: meta tensors, launches recorded and not run); each kernel it
launches becomes a :class:`~harness.authoring.spec.KernelSpec` whose arguments are what the op passed — tensors as pointers
of their dtype and storage size, scalars by value, the op's constexprs fixed, the autotune list (if any) as the
config space, the op's own launch options (``num_warps`` ...) as the one config of a kernel without one. On a GPU
a config is run by calling the op with that config forced on the kernel's autotuner; the op as shipped (its own
autotuning) is the baseline, and the reference where the entry gives none.

A reference is ``op|`` followed by JSON (the op, inputs and reference references, the kernel's name, and the shape
and dtype the spec's ``fn`` is taken from), so every worker rebuilds the same spec from the case alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, cast

from harness.authoring.spec import TRITON_DTYPES, KernelSpec, Pointer, Scalar, TensorDesc
from harness.matrix.capture import CaptureError, Launch, capture

PREFIX = "op|"
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


@dataclass(frozen=True)
class OpRef:
    op: str
    inputs: str
    reference: str
    kernel: str
    shape: tuple[tuple[str, Any], ...]
    dtype: str

    def encode(self) -> str:
        return PREFIX + json.dumps([self.op, self.inputs, self.reference, self.kernel, list(self.shape), self.dtype])

    @classmethod
    def decode(cls, ref: str) -> "OpRef":
        op, inputs, reference, kernel, shape, dtype = json.loads(ref[len(PREFIX) :])
        return cls(op, inputs, reference, kernel, tuple((k, v) for k, v in shape), dtype)

    @property
    def files(self) -> list[str]:
        """The references of the user's own code (for probing and the source hash)."""
        return [r for r in (self.op, self.inputs, self.reference) if r]


def is_op(ref: str) -> bool:
    return ref.startswith(PREFIX)


def _attr(ref: str) -> Callable[..., Any]:
    from harness.matrix.importing import import_attr

    return cast(Callable[..., Any], import_attr(ref))


@lru_cache(maxsize=64)
def _captured(
    op_ref: str, inputs_ref: str, shape: tuple[tuple[str, Any], ...], dtype: str
) -> tuple[tuple[Launch, ...], Any, str]:
    launches, result, _inputs, device = capture(_attr(op_ref), _attr(inputs_ref), dict(shape), dtype)
    return tuple(launches), result, device


def kernel_names(op_ref: str, inputs_ref: str, shape: Mapping[str, Any], dtype: str) -> tuple[list[str], str]:
    """(the distinct kernels the op launches for this shape and dtype, in launch order; the device that served).
    Raises :class:`~harness.matrix.capture.CaptureError` with the reason in one line."""
    launches, _, device = _captured(op_ref, inputs_ref, tuple(shape.items()), dtype)
    names: list[str] = []
    for launch in launches:
        if launch.name not in names:
            names.append(launch.name)
    return names, device


def _launch_of(ref: OpRef, shape: Mapping[str, Any], dtype: str) -> Launch:
    launches, _, _ = _captured(ref.op, ref.inputs, tuple((k, shape[k]) for k, _ in ref.shape), dtype)
    for launch in launches:
        if launch.name == ref.kernel:
            return launch
    raise CaptureError(
        f"the op launches no kernel {ref.kernel!r} for shape {dict(shape)} and dtype {dtype} "
        f"(it launches {', '.join(sorted({la.name for la in launches}))})"
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


def spec_for(ref_text: str) -> KernelSpec:
    """The spec of one captured kernel (cached per reference by :func:`harness.matrix.loader.load`)."""
    from harness.authoring.decorated import unwrap

    ref = OpRef.decode(ref_text)
    op = _attr(ref.op)
    first = _launch_of(ref, dict(ref.shape), ref.dtype)
    jit, decorations = unwrap(first.kernel)
    params = jit.params
    tuned = set(decorations.meta_names) if decorations else set()
    by_heuristic = {name for name, _ in decorations.heuristics} if decorations else set()

    def runtime_args(shape: Mapping[str, Any], dtype: str) -> dict[str, Any]:
        args = _launch_of(ref, shape, dtype).args
        return {p.name: describe(args[p.name]) for p in params if not p.is_constexpr and p.name in args}

    def fixed_constexprs(shape: Mapping[str, Any], dtype: str) -> dict[str, Any]:
        args = _launch_of(ref, shape, dtype).args
        return {
            p.name: args[p.name]
            for p in params
            if p.is_constexpr and p.name in args and p.name not in tuned and p.name not in by_heuristic
        }

    def grid(shape: Mapping[str, Any], config: Mapping[str, Any]) -> tuple[int, ...]:
        launch = _launch_of(ref, shape, ref.dtype)
        g = launch.grid(dict(launch.args, **config)) if callable(launch.grid) else launch.grid
        return tuple(g)

    inputs = _attr(ref.inputs)
    reference = _attr(ref.reference) if ref.reference else op
    launches, result, device = _captured(ref.op, ref.inputs, ref.shape, ref.dtype)
    same = [la for la in launches if la.name == ref.kernel]
    captured = {
        "op": ref.op,
        "device": device,
        "launches": len(launches),
        "launches_of_this_kernel": len(same),
        "kernels": sorted({la.name for la in launches}),
    }
    outputs = tuple(f"out{i}" for i in range(len(result))) if isinstance(result, (tuple, list)) else ()
    own = () if decorations and decorations.autotune_configs else (dict(first.options),)
    label = getattr(op, "__name__", "op")
    return KernelSpec(
        name=ref.kernel,
        fn=first.kernel,
        dims=tuple(k for k, _ in ref.shape),
        dtypes=tuple(TRITON_DTYPES),
        tunables=(),
        runtime_args=runtime_args,
        fixed_constexprs=fixed_constexprs,
        grid=grid,
        nvidia_configs=own,
        amd_configs=own,
        make_inputs=inputs,
        launch=lambda args, shape, config: _as_output(op(*args)),
        reference=lambda args, shape: _as_output(reference(*args)),
        outputs=outputs,
        baselines={f"{label} as shipped": lambda args, shape: _as_output(op(*args))},
        captured=captured,
    )


def _as_output(result: Any) -> Any:
    return tuple(result) if isinstance(result, list) else result
