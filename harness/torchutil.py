"""Small torch helpers for kernel files; torch is imported only when called."""
from __future__ import annotations

from typing import Any


def torch_dtype(name: str) -> Any:
    """Map a matrix dtype name (``fp16``, ``bf16``, ``fp32``) to a torch dtype."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[name]


def randn(shape: tuple[int, ...], dtype: str, device: Any, generator: Any, scale: float = 1.0) -> Any:
    """Normal random tensor drawn in fp32 on the CPU generator, then moved and cast.

    Drawing on the CPU keeps inputs identical whatever the device, so a CPU
    interpreter run and a GPU run of the same seed see the same data.
    """
    import torch

    t = torch.randn(shape, generator=generator, dtype=torch.float32) * scale
    return t.to(device=device, dtype=torch_dtype(dtype))


def element_size(dtype: str) -> int:
    return {"fp16": 2, "bf16": 2, "fp32": 4}[dtype]
