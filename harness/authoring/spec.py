"""The kernel spec: the public API a kernel file exports for the harness.

A kernel file (one of ``kernels/*.py`` or any importable module) exposes a
:class:`KernelSpec`. The spec says everything the harness needs to cross-compile
the kernel without a GPU (the Triton function and how its signature follows from
shape and dtype), to run it where a GPU or the interpreter is available
(inputs, launcher, torch reference, tolerances), to put numbers in context
(FLOP and minimal-byte model), and which configurations to try on each vendor.

Nothing here imports torch: compile workers never pay for it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from harness.authoring.spec_shapes import SpecShapes

#: dtype names accepted in matrices, and the Triton pointer element type of each. The fp8 formats
#: differ per vendor: ``fp8e4nv`` (OCP e4m3, H100 and MI355X) and ``fp8e4b8`` (MI300X's e4m3 "fnuz");
#: ``fp8`` is the format the target uses natively (see :func:`fp8_for`), for specs that run on both.
TRITON_DTYPES: dict[str, str] = {
    "fp16": "fp16",
    "bf16": "bf16",
    "fp32": "fp32",
    "fp8e4nv": "fp8e4nv",
    "fp8e4b8": "fp8e4b8",
    "fp8e5": "fp8e5",
    "fp8e5b16": "fp8e5b16",
}
FP8_DTYPES = ("fp8", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16")

#: default (atol, rtol) per dtype, for kernels that do not set their own. For fp8 the figure applies to
#: outputs (fp16/bf16/fp32) computed from fp8 inputs, compared with a reference on the same quantized values:
#: what remains is accumulation order and the output's rounding.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "fp16": (1e-2, 1e-2),
    "bf16": (2e-2, 2e-2),
    "fp32": (1e-4, 1e-4),
    **{name: (3e-2, 3e-2) for name in FP8_DTYPES},
}


def fp8_for(arch: str) -> str:
    """The e4m3 fp8 format an architecture computes in natively: MI300 (gfx942) uses the "fnuz" variant."""
    return "fp8e4b8" if arch == "gfx942" else "fp8e4nv"


ShapeValue = int | bool
Shape = Mapping[str, ShapeValue]
Config = Mapping[str, Any]


@dataclass(frozen=True)
class Scalar:
    """A runtime scalar argument: its Triton type and the value a shape gives it.

    The value is what the launcher sees, and the launcher decides the type from
    it (an integer past ``i32`` is ``i64``, a multiple of 16 gets
    ``tt.divisibility``, 1 becomes a constexpr): the harness compiles what
    Triton's own specialisation makes of the value (see :mod:`harness.compiling.launchspec`).
    ``type`` is the type the kernel's author expects, kept for documentation.
    """

    type: str
    value: int | float


@dataclass(frozen=True)
class Pointer:
    """A runtime tensor argument: element dtype, number of elements, alignment of its address in bytes.

    The size matters on AMD: Triton's HIP launcher marks a tensor of at most
    2 GiB with ``tt.pointer_range = 32`` (buffer loads); ``numel=None`` is taken
    as such a tensor and the assumption is recorded. Freshly allocated torch
    tensors are at least 256-byte aligned; ``align`` below 16 stands for a view
    at an odd offset (no ``tt.divisibility``).
    """

    dtype: str
    numel: int | None = None
    align: int = 16

    @property
    def type(self) -> str:
        return "*" + TRITON_DTYPES.get(self.dtype, self.dtype)


@dataclass(frozen=True)
class TensorDesc:
    """A host-side tensor descriptor argument (``triton.tools.tensor_descriptor.TensorDescriptor``).

    ``shape`` and ``strides`` (row-major when None) describe the tensor, ``block_shape`` the tile one
    ``desc.load`` moves, which usually follows from the config: ``runtime_args`` may take ``config=``.
    Triton's launcher types it ``tensordesc<fp16[128, 64]>``; on NVIDIA Hopper and later the kernel
    then moves tiles with TMA, on AMD with ordinary loads. The base tensor is described as a
    :class:`Pointer` would be (its size decides AMD's buffer loads).
    """

    dtype: str
    shape: tuple[int, ...]
    block_shape: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    align: int = 16

    @property
    def type(self) -> str:
        return f"tensordesc<{TRITON_DTYPES.get(self.dtype, self.dtype)}{list(self.block_shape)}>"

    def row_major_strides(self) -> tuple[int, ...]:
        if self.strides is not None:
            return tuple(self.strides)
        out, step = [], 1
        for size in reversed(self.shape):
            out.append(step)
            step *= size
        return tuple(reversed(out))


RuntimeArg = Scalar | Pointer | TensorDesc


@dataclass(frozen=True)
class KernelSpec(SpecShapes):
    """Everything the harness knows about one kernel.

    Attributes:
        name: short name used in ids and tables.
        fn: the ``@triton.jit`` function that is compiled, or the ``@triton.autotune`` / ``@triton.heuristics``
            object over one, or a plain function ``(target) -> kernel`` for a library that picks its kernel per
            vendor (called with the catalogue's :class:`~harness.model.targets.Target` of each build and each device;
            its kernels for h100 and mi300x give the default NVIDIA and AMD spaces; the CPU interpreter, which is
            neither vendor, checks the NVIDIA one).
        dims: integer shape parameters (``("M", "N", "K")``), all required.
        flags: boolean shape parameters (``("causal",)``), default False.
        dtypes: dtypes the kernel supports.
        tunables: constexpr parameters that configs choose (``BLOCK_M`` ...).
        runtime_args: ``(shape, dtype) -> {param: Pointer|Scalar|TensorDesc|None}`` for every
            non-constexpr parameter of ``fn`` without a Python default; ``None``
            is an optional argument left out (the launcher makes it a constexpr).
            It may also take keyword arguments ``target`` (the catalogue's
            :class:`~harness.model.targets.Target`: ``name``, ``vendor``, ``arch``, ``backend``)
            and ``config`` (the config's tunables), for types that depend on the
            target (fp8 formats) or the config (a descriptor's block shape).
        fixed_constexprs: ``(shape, dtype) -> {param: value}`` for constexprs
            the shape decides (head dim, causal flag, output dtype ...); the same
            optional ``target`` and ``config`` keywords.
        nvidia_configs / amd_configs: the default config spaces, each a dict of
            tunables and compile options (``num_warps``, ``waves_per_eu`` ...).
        config_ok: ``(shape, config) -> bool``; False drops a config for a shape
            (e.g. a tile wider than the head dim).
        grid: ``(shape, config) -> tuple`` launch grid (documentation; ``launch`` launches).
        make_inputs: ``(shape, dtype, device, generator) -> tuple`` of tensors.
        launch: ``(inputs, shape, config, out=None) -> output``; runs the kernel.
            The output is a tensor, or with ``outputs`` a tuple (in that order) or a
            dict (those keys) of tensors. When it accepts ``out``, the harness passes
            NaN-poisoned buffers of the reference's structure, so an element the
            kernel never writes fails the check.
        reference: ``(inputs, shape) -> output`` with torch, the structure ``launch`` returns.
            ``make_inputs``, ``launch`` and ``reference`` are optional together: a spec
            without them is compile-only (cross-compiled and judged against the limits,
            never run on a GPU or in the interpreter).
        outputs: names of the outputs when there are several (``("y", "rstd")``).
        output_tolerances: ``{output: (atol, rtol)}`` for an output whose precision does
            not follow the case's dtype (fp32 statistics of an fp16 norm).
        inplace: indices into the inputs tuple that ``launch`` overwrites (a gradient
            written over its logits): the reference is computed before any launch, and
            those inputs are restored before every check and every timed sample,
            outside the timed region.
        flops / min_bytes: ``(shape, dtype) -> float`` models for roofline figures.
        interpret_shapes: small shapes for ``TRITON_INTERPRET=1`` runs on a CPU.
        tolerances: per-dtype (atol, rtol) overrides.
        baselines: ``{name: (inputs, shape) -> output}``: library or eager
            implementations timed beside the kernel on a GPU (first is primary).
        interpret_dtypes: dtypes the CPU interpreter can check (None: all).
            Triton's interpreter keeps bf16 as raw uint16 and does arithmetic
            on the bits, so a kernel that computes in bf16 (rather than only
            converting it) must leave bf16 out; the GPU path checks it.
    """

    name: str
    fn: Any
    dims: tuple[str, ...]
    dtypes: tuple[str, ...]
    tunables: tuple[str, ...]
    runtime_args: Callable[[Shape, str], Mapping[str, RuntimeArg]]
    nvidia_configs: Sequence[Config]
    amd_configs: Sequence[Config]
    grid: Callable[[Shape, Config], tuple[int, ...]] | None = None
    make_inputs: Callable[..., tuple] | None = None
    launch: Callable[..., Any] | None = None
    reference: Callable[[tuple, Shape], Any] | None = None
    flops: Callable[[Shape, str], float] = lambda shape, dtype: 0.0
    min_bytes: Callable[[Shape, str], float] = lambda shape, dtype: 0.0
    outputs: tuple[str, ...] = ()
    output_tolerances: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    inplace: tuple[int, ...] = ()
    flags: tuple[str, ...] = ()
    fixed_constexprs: Callable[[Shape, str], Mapping[str, Any]] = lambda shape, dtype: {}
    config_ok: Callable[[Shape, Config], bool] = lambda shape, config: True
    interpret_shapes: Sequence[Shape] = ()
    tolerances: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    interpret_dtypes: tuple[str, ...] | None = None
    baselines: Mapping[str, Callable[[tuple, Shape], Any]] = field(default_factory=dict)
    #: ``(inputs, shape) -> call``: where the kernel is one of a compiled function's, a call of the whole function
    #: as Inductor runs it (no kernel held), whose device time the GPU worker splits by kernel
    #: (:mod:`harness.device.graph_time`; set by Inductor's specs only)
    graph_call: Callable[[tuple, Shape], Callable[[], Any]] | None = None

    #: the ``fn`` as given when it is ``@triton.autotune`` / ``@triton.heuristics`` over a JITFunction (``fn`` is then
    #: the JITFunction) — see :mod:`harness.authoring.decorated`
    decorated: Any = None
    decorations: Any = None
    #: set by :mod:`harness.intake.launches.ops` for a kernel captured from an op: the op, the device the capture ran on, the
    #: number of launches, the kernel's position among them (JSON-friendly; kept in each record)
    captured: Mapping[str, Any] | None = None
    #: ``fn`` as given when it is a function of the target (``fn`` is then its NVIDIA kernel): see :meth:`for_target`
    fn_of_target: Any = None

    def __post_init__(self) -> None:
        from harness.authoring.decorated import unwrap

        if self.fn_of_target is None and _is_function_of_target(self.fn):
            self._split_by_vendor()
            return
        if self.decorated is not None:
            return
        jit, found = unwrap(self.fn)
        if found is None:
            return
        # frozen: the unwrapped view is fixed once, here, before anything reads the spec
        object.__setattr__(self, "decorated", self.fn)
        object.__setattr__(self, "fn", jit)
        object.__setattr__(self, "decorations", found)
        object.__setattr__(
            self, "tunables", tuple(self.tunables) + tuple(n for n in found.meta_names if n not in self.tunables)
        )
        if not self.nvidia_configs and not self.amd_configs:  # the library's own list is every target's space
            object.__setattr__(self, "nvidia_configs", found.autotune_configs)
            object.__setattr__(self, "amd_configs", found.autotune_configs)

    def _split_by_vendor(self) -> None:
        """``fn`` is a function of the target: the NVIDIA kernel stands in where no target is known, and with no
        space written each vendor's kernel's autotune list is its vendor's space."""
        from harness.model import targets

        chooser = self.fn
        object.__setattr__(self, "fn_of_target", chooser)
        object.__setattr__(self, "fn", chooser(targets.get("h100")))
        nvidia = dataclasses.replace(self, fn_of_target=None)
        amd = dataclasses.replace(self, fn=chooser(targets.get("mi300x")), fn_of_target=None)
        for name in ("fn", "decorated", "decorations"):
            object.__setattr__(self, name, getattr(nvidia, name))
        object.__setattr__(self, "tunables", tuple(dict.fromkeys(nvidia.tunables + amd.tunables)))
        if not self.nvidia_configs and not self.amd_configs:
            for space, side in (("nvidia_configs", nvidia), ("amd_configs", amd)):
                own = side.decorations.autotune_configs if side.decorations else ()
                object.__setattr__(self, space, tuple(own))

    def for_target(self, target: Any) -> "KernelSpec":
        """The spec with the kernel ``fn`` gives for this target (itself when ``fn`` is a kernel, or no target)."""
        if self.fn_of_target is None or target is None:
            return self
        return dataclasses.replace(
            self, fn=self.fn_of_target(target), fn_of_target=None, decorated=None, decorations=None
        )

    def run(self, inputs: tuple, shape: Shape, config: Config, **kwargs: Any) -> Any:
        """``launch`` with ``config`` forced on a decorated kernel's autotuners (a plain kernel: ``launch``)."""
        assert self.launch is not None
        if self.decorated is None:
            return self.launch(inputs, shape, config, **kwargs)
        from harness.authoring.decorated import forced

        with forced(self.decorated, config):
            return self.launch(inputs, shape, config, **kwargs)

    def tolerance(self, dtype: str, output: str | None = None) -> tuple[float, float]:
        """(atol, rtol) for an output: its own entry in ``output_tolerances``, else the dtype's."""
        if output is not None and output in self.output_tolerances:
            return tuple(self.output_tolerances[output])  # type: ignore[return-value]
        return tuple(self.tolerances.get(dtype, DEFAULT_TOLERANCES[dtype]))  # type: ignore[return-value]

    @property
    def compile_only(self) -> bool:
        """No inputs, launcher or reference: the kernel is cross-compiled and judged, never run."""
        return self.make_inputs is None or self.launch is None or self.reference is None

    def inputs(self, shape: Shape, dtype: str, device: Any, generator: Any) -> Any:
        """``make_inputs`` called; a compile-only spec has none (its cases never reach a check or a timing)."""
        if self.make_inputs is None:
            raise TypeError(f"{self.name} is compile-only (no make_inputs): nothing to check or time")
        return self.make_inputs(shape, dtype, device, generator)

    def args_for(
        self, shape: Shape, dtype: str, target: Any = None, config: Config | None = None
    ) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """``runtime_args`` and ``fixed_constexprs`` for one build, each given the context it asks for."""
        return (
            _with_context(self.runtime_args, shape, dtype, target, config),
            _with_context(self.fixed_constexprs, shape, dtype, target, config),
        )

    def stand_in_nargs(self, shape: Shape, dtype: str) -> dict[str, Any]:
        """What an ``early_config_prune`` rule reads as ``nargs`` on a CPU: each scalar's value, each constexpr the
        spec fixes, and None for a tensor (a rule that needs one cannot run here, and says so)."""
        runtime, fixed = self.args_for(dict(shape), dtype)
        return {**{k: (v.value if isinstance(v, Scalar) else None) for k, v in runtime.items()}, **dict(fixed)}


def _is_function_of_target(fn: Any) -> bool:
    """A plain Python function (not a Triton kernel object, which are callable classes): a chooser of kernels."""
    import inspect

    return inspect.isfunction(fn) and not hasattr(fn, "arg_names")


def _with_context(
    fn: Callable[..., Mapping[str, Any]], shape: Shape, dtype: str, target: Any, config: Config | None
) -> Mapping[str, Any]:
    """Call ``fn(shape, dtype)`` with ``target=`` / ``config=`` when its signature names them."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(shape, dtype)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    extra = {k: v for k, v in (("target", target), ("config", dict(config or {}))) if takes_any or k in params}
    return fn(shape, dtype, **extra)
