"""Resource usage of one compiled kernel, read from its real artifacts.

NVIDIA: registers / stack / local bytes from ``cuobjdump --dump-resource-usage``,
spill bytes from ``ptxas -v``. AMD: the metadata in the AMDGCN text. Dynamic
shared memory / LDS always comes from Triton's ``metadata.shared``: it is the
figure checked at launch. Occupancy is computed here from the target's limits,
because neither toolchain's own figure accounts for Triton's dynamic LDS.
"""
from __future__ import annotations

import math
import re
import subprocess
from typing import Any

from harness.targets import Target

_CUOBJDUMP_RE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
_PTXAS_SPILL_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REG_RE = re.compile(r"Used (\d+) registers")
_AMD_FIELDS = {
    "vgpr": re.compile(r"^\s*(?:- )?\.vgpr_count:\s+(\d+)", re.M),
    "agpr": re.compile(r"^\s*(?:- )?\.agpr_count:\s+(\d+)", re.M),
    "sgpr": re.compile(r"^\s*(?:- )?\.sgpr_count:\s+(\d+)", re.M),
    "vgpr_spill": re.compile(r"^\s*(?:- )?\.vgpr_spill_count:\s+(\d+)", re.M),
    "sgpr_spill": re.compile(r"^\s*(?:- )?\.sgpr_spill_count:\s+(\d+)", re.M),
    "scratch_bytes": re.compile(r"^\s*(?:- )?\.private_segment_fixed_size:\s+(\d+)", re.M),
    "compiler_occupancy": re.compile(r"^; Occupancy:\s+(\d+)", re.M),
}


def parse_cuobjdump(text: str) -> dict[str, int]:
    m = _CUOBJDUMP_RE.search(text)
    if not m:
        raise ValueError("no 'REG:n STACK:n SHARED:n LOCAL:n' line in cuobjdump output")
    reg, stack, shared, local = (int(g) for g in m.groups())
    return {"registers": reg, "stack_bytes": stack, "static_shared": shared, "local_bytes": local}


def parse_ptxas_verbose(text: str) -> dict[str, int]:
    m = _PTXAS_SPILL_RE.search(text)
    if not m:
        raise ValueError("no spill line in ptxas -v output")
    out = {"stack_frame_bytes": int(m.group(1)), "spill_store_bytes": int(m.group(2)),
           "spill_load_bytes": int(m.group(3))}
    r = _PTXAS_REG_RE.search(text)
    if r:
        out["ptxas_registers"] = int(r.group(1))
    return out


def parse_amdgcn(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, rx in _AMD_FIELDS.items():
        m = rx.search(text)
        if m:
            out[key] = int(m.group(1))
    missing = {"vgpr", "agpr", "sgpr", "vgpr_spill", "sgpr_spill", "scratch_bytes"} - out.keys()
    if missing:
        raise ValueError(f"AMDGCN metadata lacks {sorted(missing)}")
    return out


def instruction_counts(asm: dict[str, Any], backend: str) -> dict[str, int]:
    """Counts of the instructions that decide portability of matrix code."""
    if backend == "cuda":
        ptx = asm.get("ptx", "")
        return {"mma": len(re.findall(r"^\s*mma\.sync", ptx, re.M)),
                "wgmma": len(re.findall(r"^\s*wgmma\.mma_async", ptx, re.M))}
    gcn = asm.get("amdgcn", "")
    return {"mfma": len(re.findall(r"^\s*v_mfma_", gcn, re.M)),
            "ds_ops": len(re.findall(r"^\s*ds_(?:read|write|load|store)", gcn, re.M))}


def run_tool(argv: list[str], timeout: float = 120.0) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    return proc.stdout + proc.stderr


def nvidia_occupancy(target: Target, registers: int, shared: int, num_warps: int) -> dict[str, float]:
    """Resident blocks per SM and warps per SM sub-partition (4 per SM)."""
    if num_warps * target.warp_size > target.max_threads_per_block:
        return {"blocks_per_sm": 0, "occupancy": 0.0}
    limits = [target.max_blocks_per_sm or 32, (target.max_warps_per_sm or 64) // num_warps]
    regs_per_warp = math.ceil(max(registers, 1) * target.warp_size / 256) * 256
    limits.append((target.regs_per_sm or 65536) // (regs_per_warp * num_warps))
    if shared > 0:
        # the driver reserves 1 KiB of shared memory per resident block
        limits.append(target.shared_per_sm // (shared + 1024) if shared <= target.shared_per_block else 0)
    blocks = max(0, min(limits))
    return {"blocks_per_sm": blocks, "occupancy": blocks * num_warps / 4}


def amd_occupancy(target: Target, res: dict[str, int], shared: int, num_warps: int) -> dict[str, float]:
    """Resident workgroups per CU and waves per SIMD.

    The compiler's ``; Occupancy`` figure knows registers but not Triton's
    dynamic LDS, so the LDS limit is applied here on top of it.
    """
    simds = target.simds_per_cu or 4
    max_waves = target.max_waves_per_simd or 8
    if num_warps * target.warp_size > target.max_threads_per_block:
        return {"blocks_per_sm": 0, "occupancy": 0.0}
    total_vgpr = 4 * math.ceil(max(res["vgpr"], 1) / 4) + res["agpr"]
    by_vgpr = min(max_waves, target.max_regs_per_thread // (8 * math.ceil(total_vgpr / 8)))
    waves = min(by_vgpr, res.get("compiler_occupancy", max_waves))
    blocks = (waves * simds) // num_warps
    if shared > 0:
        blocks = min(blocks, target.shared_per_sm // shared if shared <= target.shared_per_block else 0)
    return {"blocks_per_sm": blocks, "occupancy": min(float(waves), blocks * num_warps / simds)}
