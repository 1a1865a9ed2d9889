"""Small torch helpers for kernel files; torch is imported only when called."""
from __future__ import annotations

from typing import Any


def torch_dtype(name: str) -> Any:
    """Map a matrix dtype name (``fp16``, ``bf16``, ``fp32``) to a torch dtype."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[name]


def randn(shape: tuple[int, ...], dtype: str, device: Any, generator: Any, scale: float = 1.0) -> Any:
    """Normal random tensor drawn in fp32 on the generator's device, then moved and cast.

    A GPU run passes a device generator, so full-size inputs (gigabytes) are
    drawn where they are used instead of on one CPU core.
    """
    import torch

    t = torch.randn(shape, generator=generator, device=generator.device, dtype=torch.float32) * scale
    return t.to(device=device, dtype=torch_dtype(dtype))


def element_size(dtype: str) -> int:
    return {"fp16": 2, "bf16": 2, "fp32": 4}[dtype]
