"""Each config of a kernel Inductor generated, checked at the entry's real shape against a wide config of it.

The interpreter runs a program at a time in numpy: at a model's shape, Inductor's own configs (a row or 1,024
elements a program) take minutes a kernel. So the compiled graph runs on the host once with every kernel at its
*wide* config (:func:`wide`: the kernel's first config with blocks as wide as the work and a tile of
:data:`TILE` elements allow; Inductor's kernels take any power-of-two block), all of its programs, and its outputs
are compared with eager PyTorch (:mod:`harness.intake.inductor.compiled_check`). That run keeps each launch's arguments
as they were before it. Each of Inductor's configs is then launched on its own from a copy of those arguments,
and so is the wide config, each running only the programs that cover the same windows of the kernel's grid (the
first, the middle, the last and :data:`DRAWN` drawn ones on each axis, in units of the larger block, so both write
exactly the same elements); what the two wrote must agree at the dtype's tolerance. The last window holds every
mask's edge: a config whose block changes what the kernel computes (a mask wrong only for some blocks, a
reduction split differently) shows there.

Programs map to windows by Inductor's own grid expressions (:data:`AXES`): program ``p`` on an axis covers block
``p``. A kernel launched on another grid (a template, a cooperative or split-scan reduction, atomics) keeps its
first config as its reference and has its whole grid run, which the time budget may not allow: then it says so.
"""

from __future__ import annotations

import contextlib
import math
import random
from dataclasses import dataclass
from typing import Any, Iterator

from harness.intake.inductor import inductor_launches
from harness.model.runtime import Check

#: a kernel's config (``triton.Config``: its constexpr kwargs, warps, stages), as Inductor's autotuner holds it
Config = Any
#: Inductor's grid expressions whose programs are one block each on each axis, by the config field of that axis
AXES = {"Grid1D": ("XBLOCK",), "Grid2D": ("XBLOCK", "YBLOCK"), "Grid3D": ("XBLOCK", "YBLOCK", "ZBLOCK")}
#: windows drawn on each axis besides the first, the middle and the last
DRAWN = 2
#: elements of a wide config's tile (its blocks' product): numpy's work per op, not the interpreter's per program
TILE = 1 << 17
#: the widest reduction block a wide config takes (a looped reduction's R0_BLOCK)
R_BLOCK = 1 << 15
#: the interpreter's cost on this kind of host (measured on 2 cores: Inductor's pointwise and reduction kernels at
#: real shapes): seconds per program (its ops' fixed cost), seconds per element of a tile per op, ops per kernel
PER_PROGRAM_S = 2.5e-3
PER_ELEMENT_S = 6e-9
OPS = 15
TEMPLATE_FACTOR = 16


def estimate_s(autotuner: Any, config: Any, grid: tuple[int, ...]) -> float:
    """About how long the interpreter takes to run the whole launch on ``grid`` under ``config``: its programs'
    trips over a tile (each trip pays every op's fixed cost) and its elements (each op's numpy work). A kernel
    launched on another grid (a template) loops over more than its size hints say: it counts
    :data:`TEMPLATE_FACTOR` times."""
    programs = _count(grid)
    hints = {str(k): int(v) for k, v in (getattr(autotuner, "size_hints", None) or {}).items()}
    # a block Inductor fixed in the kernel (a persistent reduction's R0_BLOCK) spans its whole hint
    tile = _count(int(config.kwargs.get(f"{k.rstrip('_').upper()}BLOCK", n)) for k, n in hints.items())
    work = _count(hints.values())
    trips = max(1.0, work / max(programs * tile, 1))
    seconds = programs * trips * PER_PROGRAM_S + work * OPS * PER_ELEMENT_S
    return seconds * (1 if blocks(autotuner, config) is not None else TEMPLATE_FACTOR)


def wide(autotuner: Any) -> Any:
    """The kernel's first config with its blocks widened (:data:`TILE`, :data:`R_BLOCK`, never narrower than the
    narrowest config Inductor lists, never past the work), or the first config itself where its programs are not one block
    each (:func:`blocks`) or Inductor fixed a block (a persistent reduction's R0_BLOCK, ``no_x_dim``'s XBLOCK)."""
    import copy

    configs = list(autotuner.configs)
    first = configs[0]
    axes = AXES.get(str(autotuner.inductor_meta.get("grid_type")))
    if axes is None or blocks(autotuner, first) is None:
        return first
    made = copy.deepcopy(first)
    kw = made.kwargs
    hints = {str(k): int(v) for k, v in (getattr(autotuner, "size_hints", None) or {}).items()}
    kind = str(getattr(autotuner.heuristic_type, "name", autotuner.heuristic_type)).lower()
    if "R0_BLOCK" in kw and kind == "reduction" and "r0_" in hints:
        kw["R0_BLOCK"] = max(int(kw["R0_BLOCK"]), min(R_BLOCK, _pow2(hints["r0_"])))
    fixed = {"XBLOCK"} if autotuner.inductor_meta.get("no_x_dim") else set()
    for axis in axes:
        if axis not in kw or axis in fixed:
            continue
        narrowest = min(int(c.kwargs.get(axis, 1)) for c in configs)
        tile = _count(int(v) for k, v in kw.items() if k.endswith("BLOCK") and k != axis)
        room = max(1, TILE // max(tile, 1))
        # wide enough that the whole run is numpy's work, narrow enough that holding the narrowest config to it
        # on its windows stays cheap: about sqrt(work x narrowest / windows)
        balance = _pow2(int(math.sqrt(hints.get(axis[0].lower(), 1) * narrowest / (DRAWN + 3))))
        kw[axis] = max(narrowest, min(_pow2(hints.get(axis[0].lower(), 1)), 1 << (room.bit_length() - 1), balance))
    return made


def narrow(autotuner: Any, reference: Any) -> Any:
    """``reference`` with each grid axis's block the narrowest Inductor lists (its reduction block kept): what a
    wide config is held to on the same windows before the kernel's configs are compared with it (a kernel whose
    result depends on its block, such as a mask wrong only for wide blocks, must not be judged by a wide one)."""
    import copy

    axes = AXES.get(str(autotuner.inductor_meta.get("grid_type")), ())
    made = copy.deepcopy(reference)
    for axis in axes:
        if axis in made.kwargs:
            made.kwargs[axis] = min(int(c.kwargs.get(axis, 1)) for c in autotuner.configs)
    return made


def _pow2(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


@dataclass
class Launch:
    """One launch of the reference run: the kernel's autotuner and its arguments as they were before it ran
    (tensors on copies of their storage: the wrapper reuses its buffers). Lives in the capture child only."""

    autotuner: Any
    args: tuple[Any, ...]
    kwargs: dict[str, object]


@contextlib.contextmanager
def recording(names: set[str], kept: dict[str, Launch]) -> Iterator[None]:
    """While a held run of the compiled graph goes on: the first launch of each kernel in ``names`` kept."""

    def observer(autotuner: Any, args: tuple[Any, ...], kwargs: dict[str, object], launch: Any) -> Any:
        name = inductor_launches.kernel_name(autotuner)
        if name in names and name not in kept:
            kept[name] = Launch(autotuner, unwritten(autotuner, copied(args)), kwargs)
        return launch()

    with inductor_launches.observing(observer):
        yield


def copied(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments with each tensor on a copy of its whole storage, viewed as it was (a kernel indexes its
    pointers with the strides it was generated for); arguments that shared a storage share its copy."""
    import torch

    copies: dict[int, Any] = {}
    out: list[Any] = []
    for a in args:
        if not isinstance(a, torch.Tensor):
            out.append(a)
            continue
        storage = a.untyped_storage()
        copy = copies.setdefault(storage.data_ptr(), storage.clone())
        view = torch.empty(0, dtype=a.dtype, device=a.device)
        view.set_(copy, a.storage_offset(), a.size(), a.stride())
        out.append(view)
    return tuple(out)


def unwritten(autotuner: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments with each output Inductor only writes (``out_ptr``; an ``in_out_ptr`` is read too) filled with
    NaN where it is floating point: an element a config leaves unwritten then differs from one it writes."""
    import torch

    names = [n for n in autotuner.fn.arg_names if n not in {k for c in autotuner.configs for k in c.kwargs}]
    for name, a in zip(names, args):
        if name.startswith("out_ptr") and isinstance(a, torch.Tensor) and a.dtype.is_floating_point:
            a.fill_(float("nan"))
    return args


def blocks(autotuner: Any, config: Any) -> tuple[int, ...] | None:
    """The block each grid axis's program covers under ``config``, or None where programs are not laid out so."""
    axes = AXES.get(str(autotuner.inductor_meta.get("grid_type")))
    if axes is None or autotuner.inductor_meta.get("atomic_add_found"):
        return None
    return tuple(int(config.kwargs.get(a, 1)) for a in axes)


def windows(grid_r: tuple[int, ...], blocks_r: tuple[int, ...], grid_c: tuple[int, ...], blocks_c: tuple[int, ...],
            seed: str) -> tuple[list[list[int]], list[list[int]]] | None:  # fmt: skip
    """The program ids each of two configs runs on each axis to cover the same windows, or None where their
    blocks do not nest (one is not a multiple of the other)."""
    rng = random.Random(seed)
    chosen_r: list[list[int]] = []
    chosen_c: list[list[int]] = []
    for axis, (br, bc) in enumerate(zip(blocks_r, blocks_c)):
        wide = max(br, bc)
        if wide % br or wide % bc:
            return None
        n = grid_r[axis] if br == wide else grid_c[axis]  # the windows are the wider config's programs
        picks = sorted({0, n // 2, n - 1, *rng.sample(range(n), min(DRAWN, n))})
        chosen_r.append([p for w in picks for p in range(w * wide // br, (w + 1) * wide // br)])
        chosen_c.append([p for w in picks for p in range(w * wide // bc, (w + 1) * wide // bc)])
    return chosen_r, chosen_c


def check(launch: Launch, first: Any, config: Any, tolerance: tuple[float, float]) -> Check:
    """``config`` against ``first`` (the reference config the graph ran with) on the same windows of the launch
    (the caller holds the interpreter's patches, the host and the deadline)."""
    auto = launch.autotuner
    grid_r = inductor_launches.grid_of(auto, first, launch.args)
    grid_c = inductor_launches.grid_of(auto, config, launch.args)
    blocks_r, blocks_c = blocks(auto, first), blocks(auto, config)
    chosen = None
    if blocks_r is not None and blocks_c is not None:
        chosen = windows(grid_r, blocks_r, grid_c, blocks_c, inductor_launches.kernel_name(auto))
    total = _count(grid_c)
    ran_r, whole_r = _ran(launch, first, chosen[0] if chosen else None)
    ran_c, whole_c = _ran(launch, config, chosen[1] if chosen else None)
    ran = total
    if chosen is not None and not (whole_r or whole_c):
        ran = _count(
            [len([p for p in ps if p < g]) for ps, g in zip(chosen[1], grid_c)] + list(grid_c[len(chosen[1]) :])
        )
    said = f"{ran:,} of {total:,} programs" if ran < total else f"all {total:,} programs"
    worst, bad = 0.0, []
    for i, (r, c) in enumerate(zip(ran_r, ran_c)):
        differing, err = _disagree(c, r, *tolerance) if hasattr(r, "untyped_storage") else (0, 0.0)
        worst = max(worst, err)
        if differing:
            bad.append(f"argument {i}: {differing:,} elements")
    if bad:
        return Check(status="mismatch", max_abs_err=worst,
                     error=f"differs from the reference config on the same programs ({said}): {'; '.join(bad)} "
                     f"outside atol={tolerance[0]:g} rtol={tolerance[1]:g} (max abs err {worst:.3g})")  # fmt: skip
    return Check(status="ok", max_abs_err=worst, reason=f"at the entry's shape: {said} against the reference config's")


def _count(sizes: Any) -> int:
    n = 1
    for s in sizes:
        n *= int(s)
    return n


def _ran(launch: Launch, config: Any, programs: list[list[int]] | None) -> tuple[tuple[Any, ...], bool]:
    """The launch's arguments after ``config`` ran ``programs`` (every program where None, or where the
    interpreter cannot be told: then True)."""
    from harness.support import interpreter_programs

    fresh = copied(launch.args)
    if programs is None:
        inductor_launches.run_with(launch.autotuner, config, fresh, launch.kwargs)
        return fresh, True
    with interpreter_programs.only(programs) as told:
        inductor_launches.run_with(launch.autotuner, config, fresh, launch.kwargs)
    return fresh, not told


def _disagree(got: Any, ref: Any, atol: float, rtol: float) -> tuple[int, float]:
    """Elements where two runs from the same start differ beyond the tolerance (bit-equal and NaN-for-NaN agree:
    what neither wrote is the same in both), and the largest finite difference."""
    import torch

    if not got.dtype.is_floating_point:
        return int((got != ref).sum()), 0.0
    g, r = got.float(), ref.float()
    same = (g == r) | (torch.isnan(g) & torch.isnan(r))
    diff = (g - r).abs()
    bad = ~(same | (diff <= atol + rtol * r.abs()))
    finite = torch.isfinite(diff) & ~same
    return int(bad.sum()), float(diff[finite].max()) if bool(finite.any()) else 0.0
