"""The launch-time specialisation of a kernel, computed by Triton's own launcher code without a GPU.

When a ``@triton.jit`` kernel is launched, Triton's JIT binds the arguments,
asks the backend how to specialise each one (``tt.divisibility`` for aligned
pointers and integers that are multiples of 16, integers equal to 1 as
constexprs, ``i64`` for integers past ``i32``, ``None`` as a constexpr, and on
the HIP backend ``tt.pointer_range = 32`` for tensors of at most 2 GiB while
buffer ops are on), applies Python defaults of parameters, and parses the
compile options. A static compile must reproduce exactly that, or it compiles a
different kernel from the one that launches (on gfx942: ``global_load`` with
64-bit addresses instead of ``buffer_load``, other registers and spills).

So nothing here restates those rules: the spec's argument descriptions become
:class:`TensorArg` stand-ins (dtype, size in bytes, alignment) and plain Python
values, and the installed Triton's binder (``create_function_from_signature``)
and ``JITFunction._pack_args`` turn them into signature, constexprs, attributes
and options for the target's backend, as the launcher would on that device.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Mapping

from harness.authoring.spec import TRITON_DTYPES, KernelSpec, Pointer, Scalar, Shape, TensorDesc

#: a fake but plausible device address: 1 TiB, aligned to far more than any specialisation asks
_BASE_ADDRESS = 1 << 40


class TensorArg:
    """Stands for one real tensor argument in Triton's specialisation code.

    Triton reads ``data_ptr()`` (alignment), ``dtype`` (pointer element type) and,
    on the HIP backend, ``ptr_range()`` (Triton's own hook for objects that are
    not torch tensors; a torch tensor answers with its storage size in bytes).
    """

    def __init__(self, dtype: Any, nbytes: int | None, align: int = 16) -> None:
        self.dtype = dtype
        self.nbytes = nbytes
        self.align = align

    def data_ptr(self) -> int:
        # an address that is a multiple of ``align`` and of no larger power of two up to 16
        return _BASE_ADDRESS + (self.align if self.align < 16 else 0)

    def ptr_range(self) -> int:
        # unknown size: taken as an ordinary tensor (within 2 GiB); the assumption is recorded
        return self.nbytes if self.nbytes is not None else 1 << 20

    def __repr__(self) -> str:
        return f"TensorArg({self.dtype}, {self.nbytes} B, align {self.align})"


@dataclass(frozen=True)
class LaunchSpecialisation:
    """What Triton's launcher would compile for one launch: the inputs of ``ASTSource`` and the options."""

    signature: dict[str, str]
    constexprs: dict[tuple[int, ...], Any]
    attrs: dict[tuple[int, ...], list[list[Any]]]
    options: dict[str, Any]
    assumptions: tuple[str, ...] = ()

    def describe(self, arg_names: list[str]) -> dict[str, Any]:
        """JSON-friendly view for records: per parameter, its type and attributes or constexpr value."""
        out: dict[str, Any] = {}
        for idx, name in enumerate(arg_names):
            entry: dict[str, Any] = {"type": self.signature.get(name, "")}
            if (idx,) in self.constexprs:
                value = self.constexprs[(idx,)]
                entry["value"] = value if isinstance(value, (int, float, bool, str, type(None))) else repr(value)
            if (idx,) in self.attrs:
                entry["attrs"] = self.attrs[(idx,)]
            out[name] = entry
        return out


def triton_dtype(name: str) -> Any:
    """The ``triton.language`` dtype for a Triton type name (``fp16``, ``bf16``, ``fp8e4b8`` ...)."""
    import triton.language as tl

    # signature spellings (``*i64``) for the integer types, whose ``tl.dtype`` names are spelled out
    spelled = {f"{p}{bits}": f"{'u' if p == 'u' else ''}int{bits}" for p in ("i", "u") for bits in (1, 8, 16, 32, 64)}
    return tl.dtype(spelled.get(name, name))


def argument_values(
    spec: KernelSpec, shape: Shape, dtype: str, meta: Mapping[str, Any], target: Any = None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Every parameter the launcher would receive, by name, as stand-ins for the real arguments.

    Parameters with a Python default may be left out (the binder applies the
    default, as at a launch). Raises ``ValueError`` naming a parameter that gets no value.
    """
    from harness.authoring.decorated import heuristic_values

    runtime, fixed = spec.args_for(shape, dtype, target, meta)
    params = inspect.signature(spec.fn.fn).parameters
    values: dict[str, Any] = {}
    assumptions: list[str] = []
    by_heuristic = {name for name, _ in spec.decorations.heuristics} if spec.decorations else set()
    for name, param in params.items():
        if name in by_heuristic and name not in meta and name not in fixed:
            continue  # set below, from the other arguments, as Heuristics.run sets it at a launch
        if name in meta:
            values[name] = meta[name]
        elif name in fixed:
            values[name] = fixed[name]
        elif name in runtime:
            arg = runtime[name]
            if isinstance(arg, Pointer):
                element = triton_dtype(arg.type[1:])
                if arg.numel is None:
                    assumptions.append(f"{name}: tensor size not given by the spec, taken as within 2 GiB")
                nbytes = None if arg.numel is None else arg.numel * max(1, element.primitive_bitwidth // 8)
                values[name] = TensorArg(element, nbytes, arg.align)
            elif isinstance(arg, TensorDesc):
                values[name] = _descriptor(arg)
            elif isinstance(arg, Scalar):
                values[name] = arg.value
            else:  # None (an optional argument left out) or a plain Python value
                values[name] = arg
        elif param.default is inspect.Parameter.empty:
            raise ValueError(
                f"kernel parameter {name!r} of {spec.name} gets no value from the spec or the config and has no default"
            )
    wanted = {n for n in by_heuristic if n in params and n not in values}
    if wanted:
        found = heuristic_values(spec.decorations, {**values, **{k: v for k, v in meta.items() if k not in values}})
        values.update({n: v for n, v in found.items() if n in wanted})
        # the kernel's own parameter order: the binder reads values by name, the signature by position
        values = {n: values[n] for n in params if n in values}
    return values, tuple(assumptions)


def _descriptor(arg: TensorDesc) -> Any:
    """Triton's own host descriptor over a stand-in base tensor: its binder types it as at a launch."""
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:
        raise RuntimeError(
            "this Triton has no triton.tools.tensor_descriptor: host tensor descriptors need Triton 3.4 or later"
        ) from None
    element = triton_dtype(TRITON_DTYPES.get(arg.dtype, arg.dtype))
    numel = 1
    for size in arg.shape:
        numel *= size
    base = TensorArg(element, numel * max(1, element.primitive_bitwidth // 8), arg.align)
    return TensorDescriptor(base, list(arg.shape), list(arg.row_major_strides()), list(arg.block_shape))


def backend_for(backend: str, arch: str, warp_size: int) -> Any:
    """The installed Triton's compiler backend for a target (no GPU needed)."""
    from triton.compiler import make_backend

    from harness.support.tritoncompat import gpu_target

    return make_backend(gpu_target(backend, arch, warp_size))


def specialise(
    fn: Any, backend: Any, values: Mapping[str, Any], options: Mapping[str, Any], assumptions: tuple[str, ...] = ()
) -> LaunchSpecialisation:
    """Run the installed Triton's launch-time binder and argument packing on ``values``.

    ``fn`` is the ``JITFunction``; ``options`` the compile options a launch
    would pass as keyword arguments. The launcher adds ``debug`` and the
    instrumentation mode itself; so does this.
    """
    from triton import knobs
    from triton.runtime.jit import create_function_from_signature

    kwargs = dict(options)
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    if hasattr(knobs.compilation, "instrumentation_mode"):
        kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    try:
        bound_args, specialization, bound_options = binder(**values, **kwargs)
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        # the HIP backend's tensor hook imports torch before it asks the argument for its size
        raise RuntimeError(
            "the installed Triton's launch specialisation for this backend imports torch, which is "
            "not installed: pip install torch (or the harness's [cpu] extra)"
        ) from None
    pack = fn._pack_args if hasattr(fn, "_pack_args") else functools.partial(_pack_args_34, fn)
    parsed, signature, constexprs, attrs = pack(backend, kwargs, bound_args, specialization, bound_options)
    return LaunchSpecialisation(dict(signature), dict(constexprs), dict(attrs), dict(parsed.__dict__), assumptions)


def _pack_args_34(
    fn: Any, backend: Any, kwargs: dict[str, Any], bound_args: Any, specialization: Any, _options: Any
) -> tuple[Any, dict[Any, Any], dict[Any, Any], dict[Any, Any]]:
    """What ``JITFunction.run`` does inline in releases before ``_pack_args`` was split out of it (3.4).

    The same steps, with Triton's own helpers: options parsed by the backend, one signature
    entry per parameter, constexpr values found by path, attributes parsed by the backend.
    """
    try:
        from triton._utils import find_paths_if, get_iterable_path
    except ImportError:
        raise RuntimeError(
            "this Triton has neither JITFunction._pack_args nor triton._utils.find_paths_if: its "
            "launch-time specialisation cannot be reproduced (supported: 3.4 and later)"
        ) from None
    options = backend.parse_options(kwargs)
    sigvals = [x[0] for x in specialization]
    signature = {p.name: v for p, v in zip(fn.params, sigvals)}
    constexprs = {
        path: get_iterable_path(list(bound_args.values()), path)
        for path in find_paths_if(sigvals, lambda _, val: val == "constexpr")
    }
    attrvals = [x[1] for x in specialization]
    attrs = {
        k: backend.parse_attr(get_iterable_path(attrvals, k))
        for k in find_paths_if(attrvals, lambda _, x: isinstance(x, str))
    }
    return options, signature, constexprs, attrs


def for_case(
    spec: KernelSpec,
    shape: Shape,
    dtype: str,
    meta: Mapping[str, Any],
    options: Mapping[str, Any],
    backend: Any,
    target: Any = None,
) -> LaunchSpecialisation:
    """The launch specialisation of one (kernel, shape, dtype, config) on one backend (``target``: the catalogue
    entry, for specs whose argument types depend on it)."""
    values, assumptions = argument_values(spec, shape, dtype, meta, target)
    return specialise(spec.fn, backend, values, options, assumptions)


def ast_source(fn: Any, spec: LaunchSpecialisation) -> Any:
    """The ``ASTSource`` the launcher would build for this specialisation."""
    from triton.compiler import ASTSource

    return ASTSource(fn, spec.signature, spec.constexprs, spec.attrs)
