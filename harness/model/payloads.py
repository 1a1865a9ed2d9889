"""What a record carries, typed: a payload is a frozen dataclass, so a misspelt field is an error mypy reports
instead of a silent None from ``.get``. JSON only at the store's edge (``from_json`` / ``to_json``): what was read
is written back as it was, the same keys in the same order (a figure stored as null stays null), and keys another
harness version wrote that this one does not know are kept (``extra``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

P = TypeVar("P", bound="Payload")
_NAMES: dict[type, tuple[str, ...]] = {}
_BOOKKEEPING = ("extra", "given")


def _names(cls: type) -> tuple[str, ...]:
    """A payload's figure fields, in declaration order (not its bookkeeping: ``extra``, ``given``)."""
    if cls not in _NAMES:
        _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _BOOKKEEPING)
    return _NAMES[cls]


@dataclass(frozen=True)
class Payload:
    """The JSON edge every payload shares: ``from_json`` keeps the keys it does not know (``extra``) and the order it
    was given (``given``); ``to_json`` writes them back the same way, then any other field that is not None."""

    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)  # keys this harness does not know, kept
    given: tuple[str, ...] = field(default=(), compare=False, repr=False, kw_only=True)  # the JSON's keys, in order

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        """A JSON value as the field holds it (arrays become tuples where the field is one)."""
        return value

    @classmethod
    def from_json(cls: type[P], data: Mapping[str, Any]) -> P:
        known = _names(cls)
        values = {k: cls._read(k, v) for k, v in data.items() if k in known}
        extra = {k: v for k, v in data.items() if k not in known}
        return cls(**values, extra=extra, given=tuple(data))

    def to_json(self) -> dict[str, Any]:
        """The keys it was read with, in their order, then any other field that is not None."""
        names = self.given + tuple(
            n for n in _names(type(self)) if n not in self.given and getattr(self, n) is not None
        )
        out: dict[str, Any] = {}
        for name in names:
            value = self.extra[name] if name in self.extra else getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class Resources(Payload):
    """What one binary asks of the GPU and holds, read from the binary and the compiler's own reports
    (:mod:`harness.build.resources`); None where this vendor's tools do not report a figure, or (``spill_bytes``)
    where no report of this very binary could be had (``spill_source`` says why)."""

    # the launch, both vendors: Triton's metadata
    function: str | None = None  # the kernel's symbol in the binary: whose figures these are
    num_warps: int | None = None
    threads: int | None = None
    num_ctas: int | None = None
    shared: int | None = None  # dynamic shared memory / LDS the launch requests (metadata.shared)
    grid: tuple[int, ...] | None = None
    # comparable across vendors (harness.build.resources.comparable)
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

    @classmethod
    def _read(cls, name: str, value: Any) -> Any:
        return tuple(value) if name == "grid" and isinstance(value, list) else value


@dataclass(frozen=True)
class LimitFlag(Payload):
    """One resource over (``error``: the launch is refused) or near (``warn``) one target's limit."""

    resource: str  # "shared" | "threads" | "registers" | "tmem" | "spills" | "occupancy" (harness.build.limits)
    value: float
    limit: float
    severity: str  # "error" | "warn"


@dataclass(frozen=True)
class Artifact(Payload):
    """One file a build wrote (TTIR, TTGIR, LLIR, PTX, cubin, AMDGCN, hsaco): where, relative to the run
    directory, and the sha256 of its bytes (what launch parity and the compare gate match binaries by)."""

    path: str = ""
    sha256: str = ""
