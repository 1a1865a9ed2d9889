"""The local GPU: which model it is (cheaply, no torch) and what it is (in the GPU worker).

A case runs on the device only when the device is its target's model: an architecture
is shared by several (sm_90: H100 SXM and PCIe, H200, H800, H20; gfx942: MI300X, MI300A,
MI325X), and a target's peaks, limits and tuned winners are those of one model. The
catalogue names each target's models (``models``: patterns of the vendor's device name);
``--device-as TARGET`` maps the local device to a target explicitly, and says so in the
records. The pytest processes only ask the vendor tools, so they never create a
CUDA/HIP context; the GPU worker, pinned to one device, reads the details through torch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from harness.model.runtime import NOT_THIS_MODEL, GpuSlot


def _run(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout if out.returncode == 0 else ""


@lru_cache(maxsize=1)
def local_gpus() -> list[GpuSlot]:
    """GPUs on this host (index, arch, name, uuid, and the driver from nvidia-smi), from nvidia-smi or rocminfo."""
    gpus: list[GpuSlot] = []
    if shutil.which("nvidia-smi"):
        text = _run(["nvidia-smi", "--query-gpu=index,compute_cap,name,uuid,driver_version", "--format=csv,noheader"])
        for line in text.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 5 and re.match(r"^\d+\.\d+$", parts[1]):
                major, minor = parts[1].split(".")
                gpus.append(
                    GpuSlot(index=parts[0], arch=f"sm_{major}{minor}", name=parts[2], uuid=parts[3], driver=parts[4])
                )
    if not gpus and shutil.which("rocminfo"):
        gpus = parse_rocminfo(_run(["rocminfo"]))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES") or os.environ.get("HIP_VISIBLE_DEVICES")
    if visible is not None and visible.strip() != "":
        wanted = [v.strip() for v in visible.split(",")]
        gpus = [g for g in gpus if g.index in wanted or g.uuid in wanted]
    return gpus


def parse_rocminfo(text: str) -> list[GpuSlot]:
    """GPU agents of ``rocminfo`` output, each with its marketing name (``AMD Instinct MI300X``) where given."""
    gpus: list[GpuSlot] = []
    for block in re.split(r"\n\*{5,}\s*\n", text):
        arch = re.search(r"^\s*Name:\s+(gfx[0-9a-f]+)\s*$", block, re.M)
        if not arch:
            continue
        name = re.search(r"^\s*Marketing Name:\s+(.+?)\s*$", block, re.M)
        gpus.append(
            GpuSlot(index=str(len(gpus)), arch=arch.group(1), name=name.group(1) if name else arch.group(1), uuid="")
        )
    return gpus


def match(target: Any, gpu: GpuSlot | None, device_as: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Whether ``target``'s cases run on ``gpu``, and why not (a line for the records) when they do not.

    Same architecture and a device name that matches one of the target's ``models``; or the
    target named in ``device_as`` (the user's explicit mapping) with the architecture the same.
    """
    if gpu is None or target.arch != gpu.arch:
        return False, ""
    if target.name in device_as:
        return True, f"mapped by --device-as {target.name}: runs on the local {gpu.name or '?'}"
    if any(re.search(pattern, gpu.name or "", re.I) for pattern in target.models):
        return True, ""
    return False, (
        f"{NOT_THIS_MODEL} no {target.name} here — the local GPU is {gpu.name or '?'} (the same "
        f"{target.arch}, another model: other peaks, limits and winners); --device-as {target.name} "
        "runs these cases on it"
    )


def pick_device(worker_id: str | None, gpus: Sequence[GpuSlot]) -> GpuSlot | None:
    """The GPU a pytest(-xdist) worker uses: ``gwN`` takes GPU ``N mod count``."""
    if not gpus:
        return None
    n = int(worker_id[2:]) if worker_id and worker_id.startswith("gw") and worker_id[2:].isdigit() else 0
    return gpus[n % len(gpus)]


def pinned_env(env: dict[str, str], gpu: GpuSlot) -> dict[str, str]:
    """Environment for a worker that must see exactly one GPU, by each vendor's rules.

    NVIDIA: ``CUDA_VISIBLE_DEVICES`` names the device (its UUID where known). AMD: ROCr filters first and
    renumbers what it leaves, and HIP then indexes into that (reading ``HIP_VISIBLE_DEVICES`` and, as a synonym,
    ``CUDA_VISIBLE_DEVICES``): ``ROCR_VISIBLE_DEVICES`` names the device, and HIP's index is 0 — device ``i`` in
    HIP's variable would point past the only device ROCr left visible.
    """
    out = dict(env)
    device = gpu.uuid or gpu.index or "0"
    if (gpu.arch or "").startswith("gfx"):
        out["ROCR_VISIBLE_DEVICES"] = device
        out["HIP_VISIBLE_DEVICES"] = "0"
        out["CUDA_VISIBLE_DEVICES"] = "0"
    else:
        out["CUDA_VISIBLE_DEVICES"] = device
        out.pop("HIP_VISIBLE_DEVICES", None)
        out.pop("ROCR_VISIBLE_DEVICES", None)
    return out


def device_info() -> dict[str, Any]:
    """Details of device 0 as the (pinned) GPU worker sees it. Imports torch."""
    import torch

    props = torch.cuda.get_device_properties(0)
    hip = getattr(torch.version, "hip", None)
    if hip:
        arch = getattr(props, "gcnArchName", "").split(":")[0]
    else:
        major, minor = torch.cuda.get_device_capability(0)
        arch = f"sm_{major}{minor}"
    info: dict[str, Any] = {
        "name": props.name,
        "arch": arch,
        "sm_count": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "l2_bytes": getattr(props, "L2_cache_size", 0),
        "runtime": f"ROCm {hip}" if hip else f"CUDA {torch.version.cuda}",
        "torch": torch.__version__,
        "visible": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
    }
    try:
        import pynvml

        pynvml.nvmlInit()
        uuid = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        handle = (
            pynvml.nvmlDeviceGetHandleByUUID(uuid) if uuid.startswith("GPU-") else pynvml.nvmlDeviceGetHandleByIndex(0)
        )
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        info["uuid"] = pynvml.nvmlDeviceGetUUID(handle)
        info["sm_clock_mhz"] = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
        info["max_sm_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
        info["mem_clock_mhz"] = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)
    except Exception:  # noqa: BLE001 - nvidia-ml-py is optional
        pass
    if hip:
        info.update(_amdsmi_clocks())
    return info


def _amdsmi_clocks() -> dict[str, Any]:
    """Clocks and driver from amdsmi where installed. Written against amdsmi's API, never run on an AMD GPU."""
    try:
        import amdsmi

        amdsmi.amdsmi_init()
        handle = amdsmi.amdsmi_get_processor_handles()[0]
        clocks = amdsmi.amdsmi_get_clock_info(handle, amdsmi.AmdSmiClkType.GFX)
        return {
            "sm_clock_mhz": clocks.get("clk"),
            "max_sm_clock_mhz": clocks.get("max_clk"),
            "driver": amdsmi.amdsmi_get_gpu_driver_info(handle).get("driver_version"),
            "amdsmi": "unverified",
        }
    except Exception:  # noqa: BLE001 - optional, and unverified on real hardware
        return {}
