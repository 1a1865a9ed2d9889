"""Small torch helpers for kernel files; torch is imported only when called."""
from __future__ import annotations

from typing import Any


def torch_dtype(name: str) -> Any:
    """Map a matrix dtype name (``fp16``, ``bf16``, ``fp32``, an fp8 format) to a torch dtype."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
            "fp8e4nv": torch.float8_e4m3fn, "fp8e4b8": torch.float8_e4m3fnuz, "fp8e5": torch.float8_e5m2,
            "fp8e5b16": torch.float8_e5m2fnuz}[name]


def device_arch(device: Any) -> str:
    """``sm_90`` / ``gfx942`` for a GPU device, ``cpu`` otherwise (for formats that differ per architecture)."""
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        return "cpu"
    if torch.version.hip:
        return str(torch.cuda.get_device_properties(device).gcnArchName).split(":")[0]
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


def randn(shape: tuple[int, ...], dtype: str, device: Any, generator: Any, scale: float = 1.0) -> Any:
    """Normal random tensor drawn in fp32 on the generator's device, then moved and cast.

    A GPU run passes a device generator, so full-size inputs (gigabytes) are
    drawn where they are used instead of on one CPU core.
    """
    import torch

    t = torch.randn(shape, generator=generator, device=generator.device, dtype=torch.float32) * scale
    return t.to(device=device, dtype=torch_dtype(dtype))


def element_size(dtype: str) -> int:
    return 1 if dtype.startswith("fp8") else {"fp16": 2, "bf16": 2, "fp32": 4}[dtype]
