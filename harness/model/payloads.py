"""What a record carries, typed: a payload is a frozen dataclass, so a misspelt field is an error mypy reports
instead of a silent None from ``.get``. JSON only at the store's edge (``from_json`` / ``to_json``): what was read
is written back as it was, the same keys in the same order (a figure stored as null stays null), and keys another
harness version wrote that this one does not know are kept (``extra``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from harness.model.vocabulary import Severity

P = TypeVar("P", bound="Payload")
_BOOKKEEPING = ("extra", "given")
#: how a field holds its JSON: "one" payload, a "map" of payloads, a "seq" (tuple) of payloads, a "tuple", "plain"
Shape = tuple[str, "type[Payload] | None"]
_SHAPES: dict[type, dict[str, Shape]] = {}


def _shape(hint: Any) -> Shape:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = inner[0] if len(inner) == 1 else hint
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, Payload):
        return "one", hint
    if origin in (dict, Mapping) and len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], Payload):
        return "map", args[1]
    if origin in (tuple, list):
        item = args[0] if args else None
        if isinstance(item, type) and issubclass(item, Payload):
            return "seq" if origin is tuple else "list", item
        return ("tuple", None) if origin is tuple else ("plain", None)
    return "plain", None


def shapes(cls: type) -> dict[str, Shape]:
    """A payload's figure fields (not its bookkeeping), in declaration order, each with how JSON holds it."""
    if cls not in _SHAPES:
        hints = typing.get_type_hints(cls)
        _SHAPES[cls] = {f.name: _shape(hints[f.name]) for f in dataclasses.fields(cls) if f.name not in _BOOKKEEPING}
    return _SHAPES[cls]


def _read(shape: Shape, value: Any) -> Any:
    """A JSON value as the field holds it: objects become their payload, arrays tuples where the field is one."""
    kind, cls = shape
    if kind == "one" and cls is not None and isinstance(value, Mapping):
        return cls.from_json(value)
    if kind == "map" and cls is not None and isinstance(value, Mapping):
        return {k: cls.from_json(v) if isinstance(v, Mapping) else v for k, v in value.items()}
    if kind in ("seq", "list") and cls is not None and isinstance(value, list):
        items = [cls.from_json(v) if isinstance(v, Mapping) else v for v in value]
        return tuple(items) if kind == "seq" else items
    if kind == "tuple" and isinstance(value, list):
        return tuple(value)
    return value


def read_field(shape: Shape, value: Any) -> Any:
    """:func:`_read` for a holder of payloads that is not one itself (:class:`~harness.model.records.Record`)."""
    return _read(shape, value)


def to_json_value(value: Any) -> Any:
    """A field's value as JSON holds it, copied: payloads (and any other value with a ``to_json``, such as a
    verdict's vendor fit) as their ``to_json``, tuples as arrays."""
    if isinstance(value, Payload) or callable(getattr(value, "to_json", None)):
        return value.to_json()
    if isinstance(value, (tuple, list)):
        return [to_json_value(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json_value(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Payload:
    """The JSON edge every payload shares: ``from_json`` keeps the keys it does not know (``extra``) and the order it
    was given (``given``); ``to_json`` writes them back the same way, then any other field that is not None."""

    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)  # keys this harness does not know, kept
    given: tuple[str, ...] = field(default=(), compare=False, repr=False, kw_only=True)  # the JSON's keys, in order

    @classmethod
    def from_json(cls: type[P], data: Mapping[str, Any]) -> P:
        known = shapes(cls)
        values = {k: _read(known[k], v) for k, v in data.items() if k in known}
        extra = {k: v for k, v in data.items() if k not in known}
        return cls(**values, extra=extra, given=tuple(data))

    @classmethod
    def from_wire(cls: type[P], data: Mapping[str, Any]) -> P:
        """``from_json`` for what this very harness wrote in this run (a worker's reply, figures it gathered):
        ValueError naming any key the class does not have, where a stored file's would be kept as ``extra``."""
        unknown = sorted(set(data) - set(shapes(cls)))
        if unknown:
            raise ValueError(f"a {cls.__name__} with keys this harness does not write: {', '.join(unknown)}")
        return cls.from_json(data)

    @classmethod
    def whole(cls: type[P], **values: Any) -> P:
        """A payload whose JSON holds every field, in declaration order, a None as null."""
        return cls(**values, given=tuple(shapes(cls)))

    def without(self: P, *names: str) -> P:
        """A copy without those keys (as popping them from a dict would)."""
        cleared = {n: None for n in names if n in shapes(type(self))}
        extra = {k: v for k, v in self.extra.items() if k not in names}
        given = tuple(k for k in self.given if k not in names)
        return dataclasses.replace(self, **cleared, extra=extra, given=given)

    @classmethod
    def nested(cls) -> dict[str, tuple[str, type[Payload]]]:
        """The fields that hold payloads: name -> ("one" | "map" | "seq" | "list", the payload class)."""
        return {name: (kind, sub) for name, (kind, sub) in shapes(cls).items() if sub is not None}

    def keys(self) -> tuple[str, ...]:
        """The keys ``to_json`` writes, in its order: those it was read with, then any other field not None."""
        return self.given + tuple(n for n in shapes(type(self)) if n not in self.given and getattr(self, n) is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            name: to_json_value(self.extra[name] if name in self.extra else getattr(self, name)) for name in self.keys()
        }

    def __bool__(self) -> bool:
        """Empty (no key to write) is false, as the JSON object it stands for is."""
        return bool(self.keys())

    def has(self, name: str) -> bool:
        """Whether the JSON holds the key (a figure stored as null is held; one never set is not)."""
        return name in self.keys()

    def merged(self: P, other: Payload) -> P:
        """A copy with every key ``other`` holds set as ``other`` has it, after the keys this one has."""
        return self.updated(**{k: getattr(other, k) for k in other.keys() if k in shapes(type(self))})

    def updated(self: P, **changes: Any) -> P:
        """A copy with ``changes``, written after the keys it already has (as setting a key of a dict would)."""
        order = self.keys()
        return dataclasses.replace(self, **changes, given=order + tuple(k for k in changes if k not in order))

    def recast(self, cls: type[P]) -> P:
        """This payload as another class that declares the same figures (a worker's reply as the record's entry),
        without a trip through JSON: each key the two share keeps its value, held the same way on both sides
        (TypeError naming a field held otherwise); a key ``cls`` lacks is kept as ``extra``, as ``from_json`` keeps
        one; the keys stay in this payload's order."""
        mine, theirs = shapes(type(self)), shapes(cls)
        order = self.keys()
        differ = [k for k in order if k in theirs and k in mine and mine[k] != theirs[k]]
        if differ:
            raise TypeError(f"{type(self).__name__} and {cls.__name__} hold {', '.join(differ)} differently")
        values = {k: _read(theirs[k], self.extra[k]) if k in self.extra else getattr(self, k) for k in order
                  if k in theirs}  # fmt: skip
        extra = {k: to_json_value(self.extra[k] if k in self.extra else getattr(self, k)) for k in order
                 if k not in theirs}  # fmt: skip
        return cls(**values, extra=extra, given=order)


@dataclass(frozen=True)
class Resources(Payload):
    """What one binary asks of the GPU and holds, read from the binary and the compiler's own reports
    (:mod:`harness.compiling.resources`); None where this vendor's tools do not report a figure, or (``spill_bytes``)
    where no report of this very binary could be had (``spill_source`` says why)."""

    # the launch, both vendors: Triton's metadata
    function: str | None = None  # the kernel's symbol in the binary: whose figures these are
    num_warps: int | None = None
    threads: int | None = None
    num_ctas: int | None = None
    shared: int | None = None  # dynamic shared memory / LDS the launch requests (metadata.shared)
    grid: tuple[int, ...] | None = None
    # comparable across vendors (harness.compiling.resources.comparable)
    registers: int | None = None  # per thread (AMD: the unified VGPR + AGPR total)
    spill_bytes: int | None = None  # per thread
    blocks_per_sm: int | None = None
    occupancy: float | None = None  # resident warps per SM sub-partition (NVIDIA) or waves per SIMD (AMD)
    occupancy_frac: float | None = None  # of the target's maximum
    # NVIDIA: cuobjdump and ptxas -v of the recorded cubin
    static_shared: int | None = None
    reserved_shared: int | None = None
    local_bytes: int | None = None
    stack_bytes: int | None = None
    stack_frame_bytes: int | None = None
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    ptxas_registers: int | None = None
    ptxas_flags: str | None = None
    spill_source: str | None = None
    tmem_columns: int | None = None  # Blackwell tensor memory
    mma: int | None = None
    wgmma: int | None = None
    tcgen05_mma: int | None = None
    # AMD: the code object's metadata and the assembly
    vgpr: int | None = None
    agpr: int | None = None
    sgpr: int | None = None
    vgpr_spill: int | None = None
    sgpr_spill: int | None = None
    scratch_bytes: int | None = None
    compiler_occupancy: int | None = None
    total_vgpr: int | None = None
    mfma: int | None = None
    ds_ops: int | None = None
    # both vendors: the instruction mix (harness.compiling.resources.MIX), what a compare shows for a changed binary
    shared_loads: int | None = None
    shared_stores: int | None = None
    async_copies: int | None = None
    global_loads: int | None = None
    global_stores: int | None = None
    barriers: int | None = None
    local_ops: int | None = None


@dataclass(frozen=True)
class LimitFlag(Payload):
    """One resource over (``error``: the launch is refused) or near (``warn``) one target's limit."""

    resource: str  # shared, threads, registers, tmem, spills, occupancy, grid_x/y/z, launch_threads (compiling.limits)
    value: float
    limit: float
    severity: Severity


@dataclass(frozen=True)
class Artifact(Payload):
    """One file a build wrote (TTIR, TTGIR, LLIR, PTX, cubin, AMDGCN, hsaco): where, relative to the run
    directory, and the sha256 of its bytes (what launch parity matches binaries by). A binary also has
    ``code_sha256``, the digest of everything but its source-line table (:mod:`harness.compiling.cubin_sections`),
    which ptxas fills with the source files' modification times: what the compare gate matches two runs' binaries by."""

    path: str = ""
    sha256: str = ""
    code_sha256: str | None = None
