"""Resource usage of one compiled kernel, read from its real artifacts.

NVIDIA: registers / stack / local bytes from ``cuobjdump --dump-resource-usage``,
spill bytes from ``ptxas -v``. AMD: the metadata in the AMDGCN text, where
``.vgpr_count`` is already the unified VGPR + AGPR total on gfx90a/gfx942/gfx950
(the compiler's ``; TotalNumVgprs``) and ``; Occupancy`` is the compiler's
waves per SIMD (it knows AGPRs, SGPRs and ``waves_per_eu``). Dynamic shared
memory / LDS always comes from Triton's ``metadata.shared``: it is the figure
checked at launch, and the one thing the toolchains' occupancy does not know,
so it caps occupancy here. docs/figures.md says which field each figure is.
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
    "total_vgpr": re.compile(r"^; TotalNumVgprs:\s+(\d+)", re.M),
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
    missing = {"vgpr", "agpr", "sgpr", "vgpr_spill", "sgpr_spill", "scratch_bytes", "compiler_occupancy"} - out.keys()
    if missing:
        raise ValueError(f"AMDGCN metadata lacks {sorted(missing)}")
    return out


def instruction_counts(asm: dict[str, Any], backend: str) -> dict[str, int]:
    """Counts of the instructions that decide portability of matrix code."""
    if backend == "cuda":
        ptx = asm.get("ptx", "")
        return {"mma": len(re.findall(r"^\s*mma\.sync", ptx, re.M)),
                "wgmma": len(re.findall(r"^\s*wgmma\.mma_async", ptx, re.M)),
                "tcgen05_mma": len(re.findall(r"^\s*(?:@!?%p\d+\s+)?tcgen05\.mma", ptx, re.M))}
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


def amd_occupancy(target: Target, compiler_waves: int, shared: int, num_warps: int) -> dict[str, float]:
    """Resident workgroups per CU and waves per SIMD: the compiler's figure, capped by the dynamic LDS.

    ``compiler_waves`` is the ``; Occupancy`` line of the AMDGCN: registers,
    AGPRs, SGPRs and ``waves_per_eu`` are already in it. Triton's LDS is
    allocated at launch, so the compiler cannot see it; a CU holds
    ``LDS per CU // shared`` workgroups of ``num_warps`` waves over its SIMDs.
    """
    simds = target.simds_per_cu or 4
    if num_warps * target.warp_size > target.max_threads_per_block:
        return {"blocks_per_sm": 0, "occupancy": 0.0}
    blocks = (compiler_waves * simds) // num_warps
    waves = float(compiler_waves)
    if shared > 0:
        by_lds = target.shared_per_sm // shared if shared <= target.shared_per_block else 0
        blocks = min(blocks, by_lds)
        waves = min(waves, by_lds * num_warps / simds)
    return {"blocks_per_sm": blocks, "occupancy": waves}


def comparable(target: Target, res: dict[str, Any], num_warps: int) -> dict[str, Any]:
    """The figures compared across vendors, each in one unit, from a backend's raw ones.

    - ``registers``: per thread (NVIDIA) / per lane (AMD, VGPR + AGPR as the compiler totals them);
    - ``spill_bytes``: per-thread bytes spilled to memory: ptxas's spill stores on NVIDIA, 4 bytes per
      spilled VGPR on AMD (SGPR spills go to VGPR lanes, no memory traffic: kept raw only);
    - ``occupancy``: warps per SM sub-partition (NVIDIA) or waves per SIMD (AMD), and
      ``occupancy_frac``, that as a fraction of the target's maximum.
    """
    shared = int(res.get("shared", 0))
    out: dict[str, Any] = {}
    if target.backend == "cuda":
        out["spill_bytes"] = int(res["spill_store_bytes"])
        out.update(nvidia_occupancy(target, res["registers"], shared, num_warps))
        most = (target.max_warps_per_sm or 64) / 4
    else:
        out["registers"] = int(res["vgpr"])
        out["spill_bytes"] = 4 * int(res["vgpr_spill"])
        out.update(amd_occupancy(target, int(res["compiler_occupancy"]), shared, num_warps))
        most = float(target.max_waves_per_simd or 8)
    out["occupancy_frac"] = round(out["occupancy"] / most, 4)
    return out
