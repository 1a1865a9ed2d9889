"""What a kernel TorchInductor generated for a ``compiled:`` entry needs beside its reference
(:class:`harness.model.kernel_refs.InductorRef`, which a compile worker builds it from alone): the module texts it
names, kept by sha256, and the grid each config launches with.

Inductor writes one module per kernel, and the same kernel name stands for other source on another target (the
device properties are written into it) or shape (sizes are baked in as constants). So a reference holds, per
target, shape and dtype where the kernel is part of the graph, the sha256 of that source (the text is kept in the
harness cache, :func:`store`), its place in the kernel graph and the graph itself, its heuristic, and the grid each
config launches with.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping

from harness.model.kernel_refs import InductorRef, Slot
from harness.model.runtime import Check, InterpretCorrectness

__all__ = ["OPTIONS", "InductorRef", "Slot", "check_of", "grid_of", "source", "store"]

#: what Inductor's configs carry besides the kernel's constexprs: compile options (``_create_compile_options``)
OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


def grid_of(slot: Slot, config: Mapping[str, Any]) -> list[int] | None:
    wanted = json.dumps(dict(sorted(config.items())), sort_keys=True)
    return next((list(g) for c, g in slot.grids if c == wanted), None)


def check_of(check: Check | None, shape: Mapping[str, Any]) -> InterpretCorrectness:
    """A config's host check made at capture (:mod:`harness.intake.inductor.compiled_check`, carried by its
    :class:`harness.matrix.configs.ConfigEntry`), as its build record holds it; a capture that made none says so:
    not checked, never passed."""
    found = check or Check(status="skipped", reason="the capture made no interpreter check of this config")
    found = found.updated(shape=dict(shape))
    return InterpretCorrectness(mode="interpreter", checks=(found,), max_abs_err=found.max_abs_err)


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
