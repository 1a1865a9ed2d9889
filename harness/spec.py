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

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

#: dtype names accepted in matrices, and the Triton pointer element type of each.
TRITON_DTYPES: dict[str, str] = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32"}

#: default (atol, rtol) per dtype, for kernels that do not set their own.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "fp16": (1e-2, 1e-2),
    "bf16": (2e-2, 2e-2),
    "fp32": (1e-4, 1e-4),
}

ShapeValue = int | bool
Shape = Mapping[str, ShapeValue]
Config = Mapping[str, Any]


@dataclass(frozen=True)
class Scalar:
    """A runtime scalar argument: its Triton type and the value a shape gives it.

    The value is what the launcher sees, and the launcher decides the type from
    it (an integer past ``i32`` is ``i64``, a multiple of 16 gets
    ``tt.divisibility``, 1 becomes a constexpr): the harness compiles what
    Triton's own specialisation makes of the value (see :mod:`harness.launchspec`).
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


RuntimeArg = Scalar | Pointer


@dataclass(frozen=True)
class KernelSpec:
    """Everything the harness knows about one kernel.

    Attributes:
        name: short name used in ids and tables.
        fn: the ``@triton.jit`` function that is compiled.
        dims: integer shape parameters (``("M", "N", "K")``), all required.
        flags: boolean shape parameters (``("causal",)``), default False.
        dtypes: dtypes the kernel supports.
        tunables: constexpr parameters that configs choose (``BLOCK_M`` ...).
        runtime_args: ``(shape, dtype) -> {param: Pointer|Scalar|None}`` for every
            non-constexpr parameter of ``fn`` without a Python default; ``None``
            is an optional argument left out (the launcher makes it a constexpr).
        fixed_constexprs: ``(shape, dtype) -> {param: value}`` for constexprs
            the shape decides (head dim, causal flag, output dtype ...).
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

    def tolerance(self, dtype: str, output: str | None = None) -> tuple[float, float]:
        """(atol, rtol) for an output: its own entry in ``output_tolerances``, else the dtype's."""
        if output is not None and output in self.output_tolerances:
            return tuple(self.output_tolerances[output])  # type: ignore[return-value]
        return tuple(self.tolerances.get(dtype, DEFAULT_TOLERANCES[dtype]))  # type: ignore[return-value]

    @property
    def compile_only(self) -> bool:
        """No inputs, launcher or reference: the kernel is cross-compiled and judged, never run."""
        return self.make_inputs is None or self.launch is None or self.reference is None

    def interpretable(self, dtype: str) -> bool:
        return self.interpret_dtypes is None or dtype in self.interpret_dtypes

    def split_config(self, config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
        """Split a config into (constexpr meta-parameters, compile options)."""
        meta = {k: v for k, v in config.items() if k in self.tunables}
        options = {k: v for k, v in config.items() if k not in self.tunables}
        return meta, options

    def normalize_shape(self, shape: Shape) -> dict[str, ShapeValue]:
        """Shape with every flag present (missing flags are False)."""
        out: dict[str, ShapeValue] = {d: int(shape[d]) for d in self.dims}
        for f in self.flags:
            out[f] = bool(shape.get(f, False))
        return out
