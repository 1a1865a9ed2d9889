"""Small torch helpers for kernel files; torch is imported only when called."""

from __future__ import annotations

from typing import Any


def torch_dtype(name: str) -> Any:
    """Map a matrix dtype name (``fp16``, ``bf16``, ``fp32``, an fp8 format) to a torch dtype."""
    import torch

    return {
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "fp32": torch.float32,
        "fp8e4nv": torch.float8_e4m3fn,
        "fp8e4b8": torch.float8_e4m3fnuz,
        "fp8e5": torch.float8_e5m2,
        "fp8e5b16": torch.float8_e5m2fnuz,
    }[name]


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
    drawn where they are used instead of on one CPU core. On ``meta`` there is nothing to draw: that includes a
    GPU device under a capture's virtual device (:mod:`harness.intake.virtual_device.face_tensors` makes it ``meta``), where
    drawing on the CPU generator first cost seconds of CPU per large input for values no one reads.
    """
    import torch

    if str(device) == "meta" or (
        torch.device(device) != generator.device
        and torch.empty(0, device=device).untyped_storage().device.type == "meta"  # the face says cuda, not its storage
    ):
        return torch.empty(shape, device=device, dtype=torch_dtype(dtype))
    t = torch.randn(shape, generator=generator, device=generator.device, dtype=torch.float32) * scale
    return t.to(device=device, dtype=torch_dtype(dtype))


def element_size(dtype: str) -> int:
    return 1 if dtype.startswith("fp8") else {"fp16": 2, "bf16": 2, "fp32": 4}[dtype]


def attention_reference(inputs: tuple, shape: Any) -> Any:
    """Plain attention in fp32 (S materialised), a few heads at a time to bound memory at long context.

    For the attention kernels' (B, H, N, D) inputs with an optional ``causal`` flag. Deliberately
    not SDPA: the reference must not share code paths with the baseline it is compared against.
    """
    import math

    import torch

    q, k, v = (t.reshape(-1, shape["N"], shape["D"]) for t in inputs)
    out = torch.empty_like(q)
    n = shape["N"]
    per_chunk = max(1, (1 << 31) // (n * n * 4))
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1) if shape["causal"] else None
    for i in range(0, q.shape[0], per_chunk):
        qs, ks, vs = (t[i : i + per_chunk].float() for t in (q, k, v))
        s = torch.bmm(qs, ks.transpose(1, 2)) / math.sqrt(shape["D"])
        if mask is not None:
            s.masked_fill_(mask, float("-inf"))
        out[i : i + per_chunk] = torch.bmm(torch.softmax(s, dim=-1), vs).to(out.dtype)
    return out.reshape(inputs[0].shape)


def sdpa(inputs: tuple, shape: Any) -> Any:
    """torch's fused attention in the input dtype: the baseline the attention kernels are measured against."""
    import torch.nn.functional as F

    q, k, v = inputs
    return F.scaled_dot_product_attention(q, k, v, is_causal=bool(shape["causal"]))


def attention_bytes(shape: Any, dtype: str) -> float:
    """Q, K and V read once, O written once."""
    return 4.0 * shape["B"] * shape["H"] * shape["N"] * shape["D"] * element_size(dtype)


def attention_flops(shape: Any, dtype: str) -> float:
    """QK^T and PV: 4·B·H·N²·D, half of it under a causal mask."""
    full = 4.0 * shape["B"] * shape["H"] * shape["N"] * shape["N"] * shape["D"]
    return full / 2 if shape["causal"] else full
