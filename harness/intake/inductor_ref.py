"""A kernel TorchInductor generated for a ``compiled:`` entry of a run matrix, named so that a compile worker can
build it from its case alone, and its spec facts, which need no child (nothing of the user's is imported to know
them: the capture already said everything).

Inductor writes one module per kernel, and the same kernel name stands for other source on another target (the
device properties are written into it) or shape (sizes are baked in as constants). So a reference holds, per
target, shape and dtype where the kernel is part of the graph, the sha256 of that source (the text is kept in the
harness cache, :func:`store`), its place in the kernel graph and the graph itself, its heuristic, and the grid each
config launches with. It is ``inductor|`` followed by JSON, as an op's is ``op|`` followed by JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

PREFIX = "inductor|"
#: what Inductor's configs carry besides the kernel's constexprs: compile options (``_create_compile_options``)
OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


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

    def encode(self) -> str:
        slots = [[s.target, s.shape, s.dtype, s.source, s.position, list(s.graph), s.heuristic,
                  [[c, list(g)] for c, g in s.grids], s.choices] for s in self.slots]  # fmt: skip
        head = [self.entry, self.fn, self.inputs, self.factory, [list(o) for o in self.options], self.kernel]
        return PREFIX + json.dumps([*head, self.mode, self.torch, list(self.tunables), slots, self.dynamic])

    @classmethod
    def decode(cls, ref: str) -> "InductorRef":
        entry, fn, inputs, factory, options, kernel, mode, torch, tunables, slots, dynamic = json.loads(
            ref[len(PREFIX) :]
        )
        return cls(
            entry, fn, inputs, bool(factory), tuple((k, v) for k, v in options), kernel, mode, torch,
            tuple(tunables),
            tuple(Slot(t, sh, d, src, pos, tuple(graph), heur, tuple((c, tuple(g)) for c, g in grids), choices)
                  for t, sh, d, src, pos, graph, heur, grids, choices in slots),
            bool(dynamic),
        )  # fmt: skip

    def slot(self, target: str, shape: Mapping[str, Any], dtype: str) -> Slot | None:
        key = json.dumps(sorted(dict(shape).items()))
        return next((s for s in self.slots if (s.target, s.shape, s.dtype) == (target, key, dtype)), None)

    @property
    def source_hash(self) -> str:
        """What changes when any of its sources does (the result cache's kernel hash)."""
        return hashlib.sha256(" ".join(sorted({s.source for s in self.slots})).encode()).hexdigest()[:16]


def is_inductor(ref: str) -> bool:
    return ref.startswith(PREFIX)


def grid_of(slot: Slot, config: Mapping[str, Any]) -> list[int] | None:
    wanted = json.dumps(dict(sorted(config.items())), sort_keys=True)
    return next((list(g) for c, g in slot.grids if c == wanted), None)


def _sources() -> Path:
    from harness.support.cache import cache_dir

    return cache_dir() / "inductor-sources"


def store(source: str) -> str:
    """Keep a module's text by its sha256 (what a reference names); returns the sha256."""
    digest = hashlib.sha256(source.encode()).hexdigest()
    path = _sources() / f"{digest}.py"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")  # written whole, then renamed: a reader never sees half
        tmp.write_text(source)
        tmp.replace(path)
    return digest


def source(digest: str) -> str:
    """The module text kept under ``digest``; FileNotFoundError names it when the cache lost it."""
    path = _sources() / f"{digest}.py"
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise FileNotFoundError(f"Inductor's module {digest[:12]} is not in {path.parent}: capture again") from None
    if hashlib.sha256(text.encode()).hexdigest() != digest:
        raise ValueError(f"Inductor's module {digest[:12]} in {path.parent} does not match its sha256: capture again")
    return text
