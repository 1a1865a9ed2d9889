"""What a build records: its figures (:class:`BuildFigures`, declared once for the compile worker's reply and the
record it becomes) and how it was made: the launch specialisation per parameter, what a library's
``@triton.autotune`` / ``@triton.heuristics`` layers decided, where an op's kernel was captured, Inductor's kernel.
Payloads (:mod:`harness.model.payloads`): written by the build stage, stored, and read back as fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.model.payloads import Artifact, LimitFlag, Payload, Resources


@dataclass(frozen=True)
class ParamSpec(Payload):
    """One kernel parameter as Triton's launcher specialises it: its signature type, then its constexpr value or
    its ``tt.*`` attributes (``[name, value]`` pairs: divisibility, pointer range)."""

    type: str | None = None
    value: Any = None  # a constexpr's value (a scalar, or its repr)
    attrs: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class AutotuneFacts(Payload):
    """What a decorated kernel's layers decided for one build (harness.compiling.compile.autotune_facts)."""

    layers: tuple[str, ...] | None = None  # outermost first: "Autotuner", "Heuristics", "JITFunction"
    key: Mapping[str, Any] | None = None  # the autotune key's values for the case
    autotune_configs: int | None = None  # the size of the library's own list
    heuristics: Mapping[str, Any] | None = None  # the constexprs the heuristics computed
    prune: str | None = None
    pre_hooks: bool | None = None


@dataclass(frozen=True)
class Captured(Payload):
    """An op's kernel, captured from the library's own call (harness.intake.launches.capture)."""

    op: str | None = None
    device: str | None = None  # the tensors that served: "cuda (virtual)", "cuda", "meta" or "cpu"
    face: str | None = None  # the target whose virtual device the library was imported and captured under
    face_answers: Mapping[str, Any] | None = None  # what that device answered (harness/model/faces.yaml, cited)
    launch: int | None = None  # this launch's order among the op's distinct launches of the kernel ...
    of: int | None = None  # ... of this many
    tuned: bool | None = None  # an autotuner chose among candidates (its space, as Triton pruned it)
    launches: int | None = None  # every Triton launch the op makes per call of it, identical repeats too
    distinct_launches: int | None = None  # the launches that differ in more than the config (one build each)
    repeated: tuple[str, ...] | None = None  # which launches the op makes again identically, by call number
    launches_of_this_kernel: int | None = None
    kernels: tuple[str, ...] | None = None
    compiled_kernels: tuple[str, ...] | None = None  # Inductor's kernels from the op's torch.compile regions


@dataclass(frozen=True)
class Inductor(Payload):
    """A kernel TorchInductor generated for a matrix's ``compiled:`` entry (or an ``op:``'s ``torch.compile``
    regions), as captured under the target's face (harness.intake.inductor.compiled, harness.intake.inductor.compiled_regions) and
    built with Inductor's own compile options (harness.compiling.compiled_build)."""

    entry: str | None = None  # the matrix's compiled entry (or the op's kernels: entry)
    function: str | None = None  # what was torch.compile'd (a function, or an nn.Module factory), or the op
    op: bool | None = None  # True: a region of the op ``function`` compiles (None for a compiled: entry's)
    kernel: str | None = None  # Inductor's name of the kernel
    mode: str | None = None  # torch.compile's mode
    torch: str | None = None  # the torch whose Inductor generated it (each torch fixes its Triton)
    heuristic: str | None = None  # pointwise, reduction, persistent_reduction, template, ...
    position: int | None = None  # 1-based, in the compiled wrapper's launch order ...
    graph: tuple[str, ...] | None = None  # ... of these kernels, on this target for this shape and dtype
    source_sha256: str | None = None  # the module Inductor wrote there
    choices: int | None = None  # the template choices max-autotune listed in this graph (0 without it)
    #: the sizes the wrapper launched it with (xnumel, r0_numel, ...): a split reduction's parts and their length
    numels: Mapping[str, int] | None = None
    options: Mapping[str, Any] | None = None  # the compile options Inductor passed (waves_per_eu, debug, ...)
    #: what a GPU would have decided by timing, decided by a named policy instead (harness.model.inductor_policies)
    policies: tuple[str, ...] | None = None
    #: the attention backends the graph's SDPA calls ran on this target (cudnn, flash, efficient, math), in order
    attention: tuple[str, ...] | None = None
    #: its convolutions' output layouts on this target (contiguous: NCHW; channels_last: NHWC), in order
    conv_layout: tuple[str, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class BuildFigures:
    """What one build found, declared once: the compile worker's reply carries these fields
    (:class:`harness.model.replies.CompileReply`) and the build's record keeps them under the same names
    (:class:`harness.model.records.Record`, made from the reply by ``Record.built``, no JSON between). A new figure
    is one line here; each default is the record's value for a build that did not report it (a failed compile)."""

    fits: bool | None = None  # no launch limit refused (None: not built)
    resources: Resources = field(default_factory=Resources)
    flags: list[LimitFlag] = field(default_factory=list)
    artifacts: dict[str, Artifact] = field(default_factory=dict)  # kind (ttir, ptx, cubin, hsaco, ...) -> file
    compile_s: float | None = None
    compile_cpu_s: float | None = None  # CPU time of the compile and its tools (what compile cost is judged on)
    # "miss": compiled from source (cold); "hit": loaded from Triton's cache; "harness": the harness's result cache
    compile_cache: str | None = None
    compile_stages_s: dict[str, float] = field(default_factory=dict)  # Triton's own time per lowering stage
    ignored_options: list[str] = field(default_factory=list)  # config options this backend does not know
    launcher: str = ""  # "prebuilt" when the compile also built Triton's launcher (GPU host), or why it could not
    specialisation: dict[str, ParamSpec] = field(default_factory=dict)  # per parameter: type, attrs, constexpr
    assumptions: list[str] = field(default_factory=list)  # what the launch specialisation had to assume
    cache_key: str = ""  # Triton's compile hash (source, options, target, environment): its cache key
    autotune: AutotuneFacts = field(default_factory=AutotuneFacts)  # a decorated kernel: what its layers decided
    captured: Captured = field(default_factory=Captured)  # an op's kernel: the op, where and how it was captured
    inductor: Inductor = field(default_factory=Inductor)  # Inductor's kernel of a compiled entry: its graph, options
