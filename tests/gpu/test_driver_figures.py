"""The static figures against the CUDA driver that owns them: each recorded cubin is loaded as it is
(``cuModuleLoadData``) and the driver's own attributes and occupancy calculator are read for it.

- registers, local bytes and static shared bytes: ``cuFuncGetAttribute`` of the recorded binary;
- blocks per SM: ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` at the dynamic shared bytes Triton requests
  and at bytes that cross the shared-memory step, for 1, 2, 4 and 8 warps and registers capped from 32 to 255;
- the per-block limit: ``cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)`` accepts the opt-in maximum less the
  binary's static bytes and refuses one byte more; the 1 KiB shared section cuobjdump reports for sm_90 builds
  is not static shared for the driver (it is the per-block reserve), and occupancy counts it once.

NVIDIA only (ROCm has no such API through ctypes here); ``HARNESS_GPU_REPORT`` names a JSON file for the figures.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from helpers import compile_one  # noqa: E402

ATTR_NUM_REGS, ATTR_SHARED, ATTR_LOCAL, ATTR_MAX_DYNAMIC = 4, 1, 3, 8
DEVICE_ATTR_OPTIN = 97  # CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN


def _driver() -> ctypes.CDLL:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.version.hip:
        pytest.skip("needs an NVIDIA GPU and CUDA torch")
    torch.zeros(1, device="cuda")  # the primary context, current on this thread
    return ctypes.CDLL("libcuda.so.1")


def _check(code: int, what: str) -> None:
    assert code == 0, f"{what}: CUresult {code}"


def _function(cuda: ctypes.CDLL, cubin: bytes, name: str) -> ctypes.c_void_p:
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    _check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(cubin)), "cuModuleLoadData")
    _check(cuda.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()), "cuModuleGetFunction")
    return fn


def _attr(cuda: ctypes.CDLL, fn: ctypes.c_void_p, attr: int) -> int:
    value = ctypes.c_int()
    _check(cuda.cuFuncGetAttribute(ctypes.byref(value), attr, fn), f"cuFuncGetAttribute {attr}")
    return value.value


def _blocks(cuda: ctypes.CDLL, fn: ctypes.c_void_p, threads: int, dynamic: int) -> int:
    _check(cuda.cuFuncSetAttribute(fn, ATTR_MAX_DYNAMIC, ctypes.c_int(dynamic)), f"max dynamic {dynamic}")
    n = ctypes.c_int()
    _check(
        cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(n), fn, ctypes.c_int(threads), ctypes.c_size_t(dynamic)
        ),
        "occupancy",
    )
    return n.value


CONFIGS = [
    (
        {
            "BLOCK_M": bm,
            "BLOCK_N": bn,
            "BLOCK_K": 32,
            "GROUP_M": 8,
            "num_warps": w,
            "num_stages": 2,
            **({"maxnreg": cap} if cap else {}),
        }
    )
    for w, bm, bn in (
        (1, 32, 32),
        (2, 64, 32),
        (4, 64, 64),
        (8, 128, 128),
        (1, 64, 64),
        (2, 64, 128),
        (4, 128, 128),
        (8, 256, 128),
    )
    for cap in (None, 32, 64, 96, 128, 168, 200, 232, 255)
    if cap != 32 or w < 4
]  # wgmma needs > 32


def test_figures_and_occupancy_are_the_drivers(tmp_path: Path) -> None:
    from harness.compiling.resources import nvidia_occupancy
    from harness.model.targets import catalogue

    cuda = _driver()
    target = catalogue()["h200"]
    optin = ctypes.c_int()
    _check(cuda.cuDeviceGetAttribute(ctypes.byref(optin), DEVICE_ATTR_OPTIN, 0), "optin")
    assert optin.value == target.shared_per_block
    rows, mismatches = [], []
    for i, config in enumerate(CONFIGS):
        try:
            rec = compile_one("matmul", "fp16", {"M": 1024, "N": 1024, "K": 1024}, "h200", config, tmp_path / f"c{i}")
        except Exception as exc:  # noqa: BLE001 - ptxas may refuse a register cap: that config has no binary
            rows.append({"config": config, "compile": f"{type(exc).__name__}: {str(exc)[:200]}"})
            continue
        res = rec["resources"]
        fn = _function(cuda, (tmp_path / f"c{i}" / rec["artifacts"]["cubin"]["path"]).read_bytes(), res["function"])
        driver = {
            "registers": _attr(cuda, fn, ATTR_NUM_REGS),
            "local_bytes": _attr(cuda, fn, ATTR_LOCAL),
            "static_shared": _attr(cuda, fn, ATTR_SHARED),
        }
        # the driver's local size is the stack frame (sm_90 spills there) plus local arrays
        ours = {
            "registers": res["registers"],
            "local_bytes": res["stack_bytes"] + res["local_bytes"],
            "static_shared": res["static_shared"],
        }
        threads = res["num_warps"] * 32
        for dynamic in sorted({res["shared"], 50000, 76000, 115712 - res["static_shared"], 115712}):
            got = _blocks(cuda, fn, threads, dynamic)
            want = nvidia_occupancy(target, res["registers"], dynamic, res["num_warps"], res["static_shared"])[
                "blocks_per_sm"
            ]
            rows.append({"config": config, **ours, "dynamic": dynamic, "driver_blocks": got, "harness_blocks": want})
            if got != want:
                mismatches.append(rows[-1])
        if driver != ours:
            mismatches.append({"config": config, "driver": driver, "harness": ours})
    # the per-block limit counts the static bytes: opt-in - static is accepted, one byte more refused
    rec = compile_one(
        "softmax",
        "fp16",
        {"M": 1024, "N": 1000},
        "h200",
        {"BLOCK_M": 1, "CHUNK": 0, "num_warps": 8, "num_stages": 2},
        tmp_path / "sm",
    )
    fn = _function(
        cuda, (tmp_path / "sm" / rec["artifacts"]["cubin"]["path"]).read_bytes(), rec["resources"]["function"]
    )
    static = _attr(cuda, fn, ATTR_SHARED)
    accepted = cuda.cuFuncSetAttribute(fn, ATTR_MAX_DYNAMIC, ctypes.c_int(optin.value - static))
    refused = cuda.cuFuncSetAttribute(fn, ATTR_MAX_DYNAMIC, ctypes.c_int(optin.value - static + 1))
    limit = {
        "static_shared": static,
        "recorded_static_shared": rec["resources"]["static_shared"],
        "recorded_reserved_shared": rec["resources"]["reserved_shared"],
        "accepted_at_optin_minus_static": accepted == 0,
        "refused_one_byte_more": refused != 0,
    }
    report = os.environ.get("HARNESS_GPU_REPORT")
    if report:
        Path(report).write_text(json.dumps({"occupancy": rows, "mismatches": mismatches, "limit": limit}, indent=1))
    assert not mismatches, json.dumps(mismatches[:5])
    compiled = [r for r in rows if "registers" in r]
    assert len({r["config"]["num_warps"] for r in compiled}) == 4 and len({r["registers"] for r in compiled}) >= 6
    assert static == rec["resources"]["static_shared"] == 0 and rec["resources"]["reserved_shared"] == 1024
    assert limit["accepted_at_optin_minus_static"] and limit["refused_one_byte_more"], limit
