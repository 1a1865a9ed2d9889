"""Checks of one compile's resource usage against one target's limits.

A flag names the resource, the value and the limit. ``error`` flags mean the
kernel cannot launch on that target (Triton raises OutOfResources, or no block
can be resident); ``warn`` flags mean it launches but pays for it (spills to
memory: SGPR spills on AMD go to VGPR lanes and are not flagged).
"""

from __future__ import annotations

from typing import Any, Iterable

from harness.model.payloads import LimitFlag as Flag
from harness.model.targets import Target


def check(target: Target, resources: dict[str, Any], num_warps: int) -> list[Flag]:
    flags: list[Flag] = []
    # the driver refuses a launch whose static + dynamic shared memory exceeds the per-block opt-in maximum
    # (the 1 KiB reserve an sm_90 binary carries is outside it: ``reserved_shared``, not ``static_shared``)
    shared = int(resources.get("shared", 0)) + int(resources.get("static_shared", 0))
    if shared > target.shared_per_block:
        flags.append(Flag("shared", shared, target.shared_per_block, "error"))
    threads = num_warps * target.warp_size
    if threads > target.max_threads_per_block:
        flags.append(Flag("threads", threads, target.max_threads_per_block, "error"))
    regs = int(resources.get("registers", 0))
    if regs > target.max_regs_per_thread:
        flags.append(Flag("registers", regs, target.max_regs_per_thread, "error"))
    tmem = resources.get("tmem_columns")
    if target.tmem_columns is not None and tmem is not None and int(tmem) > target.tmem_columns:
        flags.append(Flag("tmem", int(tmem), target.tmem_columns, "error"))  # Triton refuses it at launch
    spill_bytes = int(resources.get("spill_bytes") or 0)  # None: not known (no log of this binary)
    if spill_bytes > 0:
        flags.append(Flag("spills", spill_bytes, 0, "warn"))
    flags += _launch(target, resources.get("grid"), threads)
    blocks = resources.get("blocks_per_sm")
    if blocks is not None and blocks < 1 and not any(f.resource in ("shared", "threads") for f in flags):
        flags.append(Flag("occupancy", blocks, 1, "error"))
    return flags


def _launch(target: Target, grid: Any, threads_per_block: int) -> list[Flag]:
    """The launch's grid against the target's: blocks per dimension (CUDA), work-items in all (HIP). A grid the
    build does not know (None: no ``grid`` in the spec, or one that needs the device) is not judged."""
    if not grid:
        return []
    dims = [int(g) for g in grid] + [1] * (3 - len(grid))
    out = [
        Flag(f"grid_{axis}", n, limit, "error")
        for axis, n, limit in zip("xyz", dims, (target.max_grid_x, target.max_grid_y, target.max_grid_z))
        if limit is not None and n > limit
    ]
    total = dims[0] * dims[1] * dims[2] * threads_per_block
    if target.max_threads_per_launch is not None and total > target.max_threads_per_launch:
        out.append(Flag("launch_threads", total, target.max_threads_per_launch, "error"))
    return out


def fits(flags: Iterable[Flag]) -> bool:
    """True when no flag stops the kernel from launching."""
    return not any(f.severity == "error" for f in flags)
