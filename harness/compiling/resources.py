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

import re
import subprocess
from typing import Any

from harness.model.targets import Target

_CUOBJDUMP_RE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
_CUOBJDUMP_FN_RE = re.compile(r"Function\s+(\S+?):\s*\n\s*REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
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


def _pick(per_function: dict[str, Any], name: str | None, what: str) -> Any:
    """The kernel's own entry (``metadata.name``), never a helper's; without a name, the only entry."""
    if name is not None and name in per_function:
        return per_function[name]
    if name is None and len(per_function) == 1:
        return next(iter(per_function.values()))
    raise ValueError(f"{what} has no figures for the kernel {name!r} (functions: {', '.join(per_function) or 'none'})")


def parse_cuobjdump(text: str, name: str | None = None) -> dict[str, int]:
    """``cuobjdump --dump-resource-usage``: the ``Function NAME:`` block of the kernel ``name``."""
    per: dict[str, dict[str, int]] = {}
    for m in _CUOBJDUMP_FN_RE.finditer(text):
        reg, stack, shared, local = (int(g) for g in m.group(2, 3, 4, 5))
        per[m.group(1)] = {"registers": reg, "stack_bytes": stack, "static_shared": shared, "local_bytes": local}
    if not per and not _CUOBJDUMP_RE.search(text):
        raise ValueError("no 'REG:n STACK:n SHARED:n LOCAL:n' line in cuobjdump output")
    return dict(_pick(per, name, "cuobjdump output"))


def parse_ptxas_verbose(text: str, name: str | None = None) -> dict[str, int]:
    """``ptxas -v``: the ``Function properties for NAME`` block of the kernel ``name`` (helpers have their own)."""
    per: dict[str, dict[str, int]] = {}
    blocks = re.split(r"^ptxas[\w-]* info\s*: Function properties for ", text, flags=re.M)[1:] or [f"\n{text}"]
    for block in blocks:
        fn = block.split("\n", 1)[0].strip() or (name or "")
        m = _PTXAS_SPILL_RE.search(block)
        if not m:
            continue
        entry = {
            "stack_frame_bytes": int(m.group(1)),
            "spill_store_bytes": int(m.group(2)),
            "spill_load_bytes": int(m.group(3)),
        }
        r = _PTXAS_REG_RE.search(block)
        if r:
            entry["ptxas_registers"] = int(r.group(1))
        per[fn] = entry
    if not per:
        raise ValueError("no spill line in ptxas -v output")
    if name is None:  # the entry function: the one ptxas reports registers for
        entries = {k: v for k, v in per.items() if "ptxas_registers" in v}
        return dict(_pick(entries or per, None, "ptxas -v output"))
    return dict(_pick(per, name, "ptxas -v output"))


def parse_amdgcn(text: str, name: str | None = None) -> dict[str, int]:
    """The kernel's own metadata entry (``.name: NAME`` in ``amdhsa.kernels``) and the compiler's comments of
    its own function (``; Occupancy``, ``; TotalNumVgprs``), never a noinline helper's."""
    meta, body = text, text
    if name is not None:
        listing = text.split("amdhsa.kernels:", 1)[-1]
        indent = re.search(r"^(\s*)- ", listing, re.M)
        entries = re.split(rf"^{indent.group(1) if indent else ''}- ", listing, flags=re.M)
        meta = next((e for e in entries if re.search(rf"^\s*\.name:\s+{re.escape(name)}\s*$", e, re.M)), "")
        if not meta:
            raise ValueError(f"AMDGCN metadata has no kernel named {name!r}")
        meta = "- " + meta
        start = re.search(rf"^\s*\.type\s+{re.escape(name)},@function", text, re.M)
        if start:
            rest = text[start.end() :]
            nxt = re.search(r"^\s*\.type\s+\S+,@function", rest, re.M)
            body = rest[: nxt.start()] if nxt else rest
    out: dict[str, int] = {}
    for key, rx in _AMD_FIELDS.items():
        m = rx.search(body if key in ("compiler_occupancy", "total_vgpr") else meta)
        if m:
            out[key] = int(m.group(1))
    missing = {"vgpr", "agpr", "sgpr", "vgpr_spill", "sgpr_spill", "scratch_bytes", "compiler_occupancy"} - out.keys()
    if missing:
        raise ValueError(f"AMDGCN metadata lacks {sorted(missing)}")
    return out


#: the instruction mix a compare shows for a changed binary, the same names for both vendors: counted in the PTX
#: (NVIDIA) or the AMDGCN (AMD) Triton wrote, as instruction mnemonics at the start of a line (a predicate aside)
MIX: dict[str, dict[str, str]] = {
    "cuda": {
        "shared_loads": r"(?:ld\.shared|ldmatrix)",
        "shared_stores": r"(?:st\.shared|stmatrix)",
        "async_copies": r"cp\.async(?:\.bulk)?\.(?!commit|wait)",
        "global_loads": r"ld\.global",
        "global_stores": r"st\.global",
        "barriers": r"(?:bar|barrier)\.(?:sync|arrive)",
        "local_ops": r"(?:ld|st)\.local",
    },
    "hip": {
        "shared_loads": r"ds_(?:read|load)",
        "shared_stores": r"ds_(?:write|store)",
        "async_copies": r"(?:global|buffer)_load_lds",
        "global_loads": r"(?:global|buffer)_load(?!_lds)",
        "global_stores": r"(?:global|buffer)_store",
        "barriers": r"s_barrier",
        "local_ops": r"scratch_(?:load|store)",
    },
}


def instruction_counts(asm: dict[str, Any], backend: str) -> dict[str, int]:
    """Counts of the instructions that decide portability of matrix code (MMA / WGMMA / MFMA), and the mix
    (:data:`MIX`) a compare reports when a binary changes."""
    text = asm.get("ptx", "") if backend == "cuda" else asm.get("amdgcn", "")
    pred = r"^\s*(?:@!?%p\d+\s+)?"
    out = {
        name: len(re.findall(pred + rx, text, re.M)) for name, rx in MIX["cuda" if backend == "cuda" else "hip"].items()
    }
    if backend == "cuda":
        out.update(
            mma=len(re.findall(r"^\s*mma\.sync", text, re.M)),
            wgmma=len(re.findall(r"^\s*wgmma\.mma_async", text, re.M)),
            tcgen05_mma=len(re.findall(pred + r"tcgen05\.mma", text, re.M)),
        )
    else:
        out.update(
            mfma=len(re.findall(r"^\s*v_mfma_", text, re.M)),
            ds_ops=len(re.findall(r"^\s*ds_(?:read|write|load|store)", text, re.M)),
        )
    return out


def run_tool(argv: list[str], timeout: float = 120.0) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    return proc.stdout + proc.stderr


#: CUDA's occupancy rules (the CUDA occupancy calculator, ``cuda_occupancy.h``) for sm_80 and later
SUB_PARTITIONS = 4  # register file split in four; a warp's registers come from its sub-partition
REG_ALLOC_UNIT = 256  # registers are allocated per warp in units of 256
SMEM_ALLOC_UNIT = 128  # shared memory is allocated per block in units of 128 bytes
RESERVED_SMEM = 1024  # shared memory the driver reserves per block (cudaDevAttrReservedSharedMemoryPerBlock)


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def nvidia_occupancy(
    target: Target, registers: int, shared: int, num_warps: int, static_shared: int = 0
) -> dict[str, float]:
    """Resident blocks per SM and warps per SM sub-partition, by the rules of CUDA's occupancy calculator.

    - registers: ``registers × 32`` rounded up to 256 per warp; each of the 4 sub-partitions holds
      ``regs_per_sm / 4`` of them, so warps per SM is (warps per sub-partition) × 4, and a block's warps are
      rounded up to a multiple of 4 for the per-block register check (the hardware's);
    - shared memory: static + dynamic + the driver's 1 KiB reserve per block, in 128-byte units, against
      the SM's shared memory; ``static_shared`` is the driver's static size (an sm_90 binary's 1 KiB reserved
      section is the reserve itself, not counted again: docs/figures.md);
    - warps and blocks per SM.
    """
    threads = num_warps * target.warp_size
    if threads > target.max_threads_per_block:
        return {"blocks_per_sm": 0, "occupancy": 0.0}
    warps = -(-threads // target.warp_size)
    regs_per_sm = target.regs_per_sm or 65536
    limits = [target.max_blocks_per_sm or 32, (target.max_warps_per_sm or 64) // warps]
    per_warp = _round_up(max(registers, 1) * target.warp_size, REG_ALLOC_UNIT)
    if per_warp * _round_up(warps, SUB_PARTITIONS) > regs_per_sm or per_warp * warps > regs_per_sm:
        limits.append(0)
    else:
        limits.append((regs_per_sm // SUB_PARTITIONS // per_warp) * SUB_PARTITIONS // warps)
    per_block = _round_up(shared + static_shared + RESERVED_SMEM, SMEM_ALLOC_UNIT)
    limits.append(target.shared_per_sm // per_block if shared + static_shared <= target.shared_per_block else 0)
    blocks = max(0, min(limits))
    return {"blocks_per_sm": blocks, "occupancy": blocks * warps / SUB_PARTITIONS}


def amd_occupancy(target: Target, compiler_waves: int, shared: int, num_warps: int) -> dict[str, float]:
    """Resident workgroups per CU and waves per SIMD, in whole workgroups.

    ``compiler_waves`` is the ``; Occupancy`` line of the AMDGCN: the waves one SIMD can hold given the
    kernel's VGPRs, AGPRs, SGPRs and ``waves_per_eu``. A workgroup's waves are spread over the CU's SIMDs,
    so one of ``num_warps`` waves needs ``ceil(num_warps / simds)`` slots on the busiest SIMD (workgroups
    smaller than the SIMD count share SIMDs); the CU holds whole workgroups only, also by LDS (Triton's LDS
    is allocated at launch: the compiler cannot see it). The figure is the waves per SIMD those workgroups
    really put there: 8 waves at 3 per SIMD is one workgroup, 2 waves per SIMD, not 3.
    """
    simds = target.simds_per_cu or 4
    if num_warps * target.warp_size > target.max_threads_per_block:
        return {"blocks_per_sm": 0, "occupancy": 0.0}
    if num_warps <= simds:
        blocks = (compiler_waves * simds) // num_warps
    else:
        blocks = compiler_waves // -(-num_warps // simds)
    if shared > 0:
        blocks = min(blocks, target.shared_per_sm // shared if shared <= target.shared_per_block else 0)
    return {"blocks_per_sm": blocks, "occupancy": blocks * num_warps / simds}


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
        # None where no ptxas log of this very binary could be had (res["spill_source"] says why)
        out["spill_bytes"] = int(res["spill_store_bytes"]) if "spill_store_bytes" in res else None
        out.update(nvidia_occupancy(target, res["registers"], shared, num_warps, int(res.get("static_shared", 0))))
        most = (target.max_warps_per_sm or 64) / 4
    else:
        out["registers"] = int(res["vgpr"])
        out["spill_bytes"] = 4 * int(res["vgpr_spill"])
        out.update(amd_occupancy(target, int(res["compiler_occupancy"]), shared, num_warps))
        most = float(target.max_waves_per_simd or 8)
    out["occupancy_frac"] = round(out["occupancy"] / most, 4)
    return out
