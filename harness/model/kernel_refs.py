"""What a case's ``ref`` names, typed: a kernel spec in a file or module (:class:`FileRef`), one kernel captured
from a library's op (:class:`OpRef`), or one kernel TorchInductor generated for a compiled entry
(:class:`InductorRef`), or a compiled entry whose capture failed (:class:`CaptureFailedRef`). A ref travels as text (a case's key, a job's wire form, a record's provenance); it is
decoded here, once per text (:func:`decode`), and every stage asks which kind it holds by its type.

The text forms: ``/abs/file.py:ATTR`` or ``module:ATTR``; ``op|``, ``inductor|`` and ``capture-failed|`` followed by JSON, each
rebuilt from the case alone by whichever worker takes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

OP, INDUCTOR, CAPTURE_FAILED = "op|", "inductor|", "capture-failed|"


@dataclass(frozen=True)
class FileRef:
    """A :class:`~harness.authoring.spec.KernelSpec` named by ``location:attr`` (a ``.py`` path or a module)."""

    location: str
    attr: str

    def encode(self) -> str:
        return f"{self.location}:{self.attr}"

    @property
    def is_path(self) -> bool:
        return self.location.endswith(".py")


@dataclass(frozen=True)
class OpRef:
    op: str
    inputs: str
    reference: str
    kernel: str
    shape: tuple[tuple[str, Any], ...]
    dtype: str
    launch: int = 1  # the launch's order among the op's distinct launches of this kernel

    def encode(self) -> str:
        return OP + json.dumps(
            [self.op, self.inputs, self.reference, self.kernel, list(self.shape), self.dtype, self.launch]
        )

    @classmethod
    def decode(cls, ref: str) -> "OpRef":
        op, inputs, reference, kernel, shape, dtype, *launch = json.loads(ref[len(OP) :])
        return cls(op, inputs, reference, kernel, tuple((k, v) for k, v in shape), dtype, *launch)

    @property
    def files(self) -> list[str]:
        """The references of the user's own code (for probing and the source hash)."""
        return [r for r in (self.op, self.inputs, self.reference) if r]


@dataclass(frozen=True)
class Slot:
    """The kernel in one target's graph for one shape and dtype."""

    target: str
    shape: str  # :func:`harness.matrix.ops_entries.shape_key`
    dtype: str
    source: str  # sha256 of the module Inductor wrote there
    position: int  # 1-based, in the compiled wrapper's launch order
    graph: tuple[str, ...]  # every kernel the wrapper launches there, in order
    heuristic: str  # pointwise, reduction, persistent_reduction, template, ...
    grids: tuple[tuple[str, tuple[int, ...]], ...]  # config (canonical JSON) -> the grid it launches with
    choices: int = 0  # the template choices max-autotune listed for this graph (0 without it)
    #: the sizes its first launch was given (``xnumel``, ``r0_numel``...): a split reduction's parts show here
    numels: tuple[tuple[str, int], ...] = ()
    #: what the target's libraries decided for the graph around it: the attention backends its SDPA calls ran
    #: (``attention``) and its convolutions' output layouts (``conv_layout``), each once, in order
    attention: tuple[str, ...] = ()
    conv_layout: tuple[str, ...] = ()


@dataclass(frozen=True)
class InductorRef:
    entry: str  # the matrix's compiled entry
    fn: str  # the function (or nn.Module factory) compiled
    inputs: str  # its inputs function
    factory: bool  # fn(shape, dtype) makes the nn.Module to compile
    options: tuple[tuple[str, Any], ...]  # the entry's Inductor options
    kernel: str  # Inductor's name of it
    mode: str  # torch.compile's mode ("default", "max-autotune")
    torch: str
    tunables: tuple[str, ...]  # the kernel's constexprs: what is not a compile option in its configs
    slots: tuple[Slot, ...]
    dynamic: bool = False  # compiled with dynamic shapes (the entry's ``dynamic: true``)
    op: bool = False  # ``fn`` is an ``op:`` whose torch.compile regions launch the kernel: called as is, not compiled
    reference: str = ""  # the op's reference (its ``reference:``), where it gives one

    def encode(self) -> str:
        slots = [[s.target, s.shape, s.dtype, s.source, s.position, list(s.graph), s.heuristic,
                  [[c, list(g)] for c, g in s.grids], s.choices, [],  # (the checks were here: a config's now)
                  [list(n) for n in s.numels], list(s.attention), list(s.conv_layout)]
                 for s in self.slots]  # fmt: skip
        head = [self.entry, self.fn, self.inputs, self.factory, [list(o) for o in self.options], self.kernel]
        tail = [self.op, self.reference] if self.op else []
        return INDUCTOR + json.dumps([*head, self.mode, self.torch, list(self.tunables), slots, self.dynamic, *tail])

    @classmethod
    def decode(cls, ref: str) -> "InductorRef":
        entry, fn, inputs, factory, options, kernel, mode, torch, tunables, slots, dynamic, *tail = json.loads(
            ref[len(INDUCTOR) :]
        )
        op, reference = (bool(tail[0]), str(tail[1])) if tail else (False, "")
        return cls(
            entry, fn, inputs, bool(factory), tuple((k, v) for k, v in options), kernel, mode, torch,
            tuple(tunables),
            tuple(Slot(t, sh, d, src, pos, tuple(graph), heur, tuple((c, tuple(g)) for c, g in grids), choices,
                       tuple((n, int(v)) for n, v in (rest[1] if len(rest) > 1 else ())),
                       tuple(rest[2]) if len(rest) > 2 else (), tuple(rest[3]) if len(rest) > 3 else ())
                  for t, sh, d, src, pos, graph, heur, grids, choices, *rest in slots),
            bool(dynamic), op, reference,
        )  # fmt: skip

    def slot(self, target: str, shape: Mapping[str, Any], dtype: str) -> Slot | None:
        key = json.dumps(sorted(dict(shape).items()))
        return next((s for s in self.slots if (s.target, s.shape, s.dtype) == (target, key, dtype)), None)

    @property
    def source_hash(self) -> str:
        """What changes when any of its sources does (the result cache's kernel hash)."""
        return hashlib.sha256(" ".join(sorted({s.source for s in self.slots})).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CaptureFailedRef:
    """A compiled entry whose capture failed on some target, shape and dtype: no kernel to build there, one failed
    case each, with why (a graph break, a hang, a crash, inputs that ended their process). The entry's other cases,
    and every other entry's, keep their results."""

    entry: str
    fn: str
    why: tuple[tuple[tuple[str, str, str], str], ...]  # (target, shape key, dtype) -> the line that says why

    def encode(self) -> str:
        return CAPTURE_FAILED + json.dumps([self.entry, self.fn, [[list(k), w] for k, w in self.why]])

    @classmethod
    def decode(cls, ref: str) -> "CaptureFailedRef":
        entry, fn, why = json.loads(ref[len(CAPTURE_FAILED) :])
        return cls(str(entry), str(fn), tuple(((str(t), str(s), str(d)), str(w)) for (t, s, d), w in why))

    def said(self, target: str, shape_key: str, dtype: str) -> str:
        """Why the capture failed on ``target`` for a shape (:func:`harness.matrix.entry.shape_key`) and dtype."""
        return next((w for k, w in self.why if k == (target, shape_key, dtype)), "its capture failed")

    @property
    def source_hash(self) -> str:
        return hashlib.sha256(self.encode().encode()).hexdigest()[:16]


KernelRef = FileRef | OpRef | InductorRef | CaptureFailedRef


def graph_identity(graph: tuple[str, ...], position: int) -> str:
    """A kernel Inductor generated, named by its place in its graph: the name without Inductor's running number and
    its occurrence among the graph's kernels of that name (``triton_poi_fused_add#2``). Inductor numbers kernels in
    the order it writes them, so one kernel's number moves when another is added before it (a mode, a shape, a torch
    that fuses differently): two runs' kernels are matched by this, not by the number."""
    import re

    def stem(name: str) -> str:
        return re.sub(r"_\d+$", "", name)

    mine = stem(graph[position - 1])
    return f"{mine}#{sum(1 for n in graph[:position] if stem(n) == mine)}"


@lru_cache(maxsize=4096)
def decode(ref: str) -> KernelRef:
    """The typed reference ``ref`` holds (ValueError for text no harness writes: a malformed op or Inductor form)."""
    try:
        if ref.startswith(OP):
            return OpRef.decode(ref)
        if ref.startswith(INDUCTOR):
            return InductorRef.decode(ref)
        if ref.startswith(CAPTURE_FAILED):
            return CaptureFailedRef.decode(ref)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a kernel reference this harness writes: {ref[:80]!r} ({exc})") from None
    location, _, attr = ref.rpartition(":")
    return FileRef(location, attr)
