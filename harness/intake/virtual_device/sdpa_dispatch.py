"""Which kernel ``scaled_dot_product_attention`` runs on the target's GPU, decided under the face as that GPU's torch
decides it, so the graph Inductor compiles holds the same attention op.

On a GPU, ATen's ``scaled_dot_product_attention`` asks a C++ chooser (``aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp``, ``select_sdp_backend``) for a backend and calls it: cuDNN, flash or memory-efficient attention are
one extern kernel in Inductor's graph (no Triton kernel for the attention itself), the math fallback is decomposed
into matmuls and a softmax that Inductor fuses into Triton kernels. The chooser reads the live device; under a face
there is none (a CPU build has no CUDA chooser at all and always falls back to math), so an attention block captured
for an H100 had Triton softmax kernels the H100 never runs.

:func:`choose` restates the chooser's filters for dense inputs in its priority order, with the device facts the face
carries (``faces.yaml``: each target's order and the library versions its torch ships); :func:`wear` puts it in front
of ATen's own composite for CUDA tensors in a capture child. Where the inputs fall outside what is restated here
(nested tensors, dropout, inputs that need grad), the capture refuses in one line rather than guess.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from harness.support import torchcompat


class Face(Protocol):
    """What the chooser reads of a target's face (:class:`harness.intake.virtual_device.face.Face`)."""

    vendor: str
    sdpa_order: tuple[str, ...]
    cudnn_head_dim: int
    flash_head_dim: int


@dataclass(frozen=True)
class Inputs:
    """What the chooser reads of one call: dtype name, q/k/v sizes and strides, the mask's dtype (None: no mask)."""

    dtype: str
    q: tuple[int, ...]
    k: tuple[int, ...]
    v: tuple[int, ...]
    last_strides: tuple[int, int, int]
    mask: str | None
    causal: bool
    gqa: bool


class SdpaChoiceError(Exception):
    """Inputs the restated chooser does not cover; one line."""


_HALF = ("float16", "bfloat16")


def choose(face: Face, call: Inputs) -> str:
    """The backend the target's torch runs for ``call``: ``cudnn``, ``flash``, ``efficient`` or ``math``."""
    if len(call.q) != 4 or len(call.k) != 4 or len(call.v) != 4:
        return "math"  # every fused backend wants 4-D dense inputs (check_tensor_shapes)
    for backend in face.sdpa_order:
        if backend == "math" or _usable(backend, face, call):
            return backend
    return "math"


def _usable(backend: str, face: Face, call: Inputs) -> bool:
    b, h, s_q, d_qk = call.q
    s_k, d_v = call.k[2], call.v[3]
    same_heads = call.q[1] == call.k[1] == call.v[1]
    heads_ok = same_heads or (call.gqa and call.q[1] % call.k[1] == 0 and call.k[1] == call.v[1])
    dense_ok = min(s_q, s_k) > 0 and heads_ok and call.q[0] == call.k[0] == call.v[0]
    if backend == "cudnn":
        limit = 192 if (d_qk, d_v) == (192, 128) else face.cudnn_head_dim
        return (call.dtype in _HALF and dense_ok and b <= 65535 and h <= 65535 and d_qk <= limit and d_v <= limit
                and d_qk % 8 == 0 and d_v % 8 == 0 and s_k != 1 and all(s == 1 for s in call.last_strides))  # fmt: skip
    if backend == "flash":
        same_dim = d_qk == call.k[3] == d_v
        unit_strides = all(s == 1 or n == 1 for s, n in zip(call.last_strides, (d_qk, call.k[3], d_v)))
        return (call.dtype in _HALF and call.mask is None and same_dim and d_qk <= face.flash_head_dim and dense_ok
                and (not call.causal or s_q == s_k) and unit_strides)  # fmt: skip
    if backend == "efficient":
        align = 8 if call.dtype in _HALF else 4
        dtypes = _HALF + ("float32",)
        mask_ok = call.mask is None or face.vendor == "nvidia" or call.mask in ("bool", call.dtype)
        return (call.dtype in dtypes and d_qk == call.k[3] and d_qk % align == 0 and d_v % align == 0
                and (face.vendor == "nvidia" or d_qk <= face.flash_head_dim) and mask_ok and dense_ok
                and (same_heads or face.vendor == "nvidia")
                and all(s == 1 for s in call.last_strides))  # fmt: skip
    return False


def wear(face: Face) -> None:
    """Put the chooser in front of ATen's composite for CUDA tensors (the autograd key runs before it)."""
    import warnings

    import torch

    cudnn, flash = torchcompat.attention_op("cudnn"), torchcompat.attention_op("flash")
    efficient, math = torchcompat.attention_op("efficient"), torchcompat.attention_op("math")

    def sdpa(q: Any, k: Any, v: Any, attn_mask: Any = None, dropout_p: float = 0.0, is_causal: bool = False, *,
             scale: Any = None, enable_gqa: bool = False) -> Any:  # fmt: skip
        if dropout_p or q.is_nested or any(t.requires_grad for t in (q, k, v)):
            raise SdpaChoiceError("scaled_dot_product_attention with dropout, nested inputs or inputs that need grad "
                                  "is not captured: its backend choice on the target is not restated here")  # fmt: skip
        call = Inputs(str(q.dtype).removeprefix("torch."), tuple(q.shape), tuple(k.shape), tuple(v.shape),
                      (q.stride(-1), k.stride(-1), v.stride(-1)),
                      None if attn_mask is None else str(attn_mask.dtype).removeprefix("torch."), is_causal,
                      enable_gqa)  # fmt: skip
        backend = choose(face, call)
        CHOSEN.append(backend)
        if backend == "cudnn":
            return cudnn(q, k, v, attn_mask, False, 0.0, is_causal, False, scale=scale)[0]
        if backend == "flash":
            d = q.shape[-1]
            pad = (-d) % 8  # flash runs on a head dim padded to a multiple of 8, the scale taken from the real one
            if pad:
                q, k, v = (torch.nn.functional.pad(t, (0, pad)) for t in (q, k, v))
            real_scale = scale if scale is not None else 1.0 / float(d) ** 0.5
            out = flash(q, k, v, 0.0, is_causal, False, scale=real_scale)[0]
            return out[..., :d] if pad else out
        if backend == "efficient":
            return efficient(q, k, v, attn_mask, False, 0.0, is_causal, scale=scale)[0]
        if attn_mask is not None and attn_mask.dtype == torch.bool:  # the composite's boolean-mask conversion
            zero = torch.scalar_tensor(0.0, dtype=q.dtype, device=attn_mask.device)
            attn_mask = torch.where(attn_mask.logical_not(), -float("inf"), zero)
        return math(q, k, v, attn_mask, 0.0, is_causal, None, scale=scale, enable_gqa=enable_gqa)[0]

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        library.impl("scaled_dot_product_attention", sdpa, "AutogradCUDA")
    _KEPT.append(library)


_KEPT: list[Any] = []
#: the backend each call chose, in order (the capture's record of it)
CHOSEN: list[str] = []


#: the attention backends whose kernels a GPU's graph may call and that have no CPU kernel
GPU_ONLY = ("cudnn", "flash", "efficient")


def _on_cpu(backend: str) -> Any:
    """A CPU kernel for ``op``: the attention computed by ATen's CPU flash attention (what eager SDPA runs on the
    CPU), each output laid out as the op's meta kernel lays it out (the compiled wrapper checks sizes and strides);
    the outputs a forward pass reads are the attention and its log-sum-exp, the rest are the meta kernel's."""
    import torch

    op, on_cpu = torchcompat.attention_op(backend), torchcompat.attention_op("flash_cpu")

    def kernel(query: Any, key: Any, value: Any, *rest: Any, scale: Any = None) -> Any:
        mask, rest = (rest[0], rest[2:]) if backend != "flash" else (None, rest)
        is_causal = bool(rest[1]) if len(rest) > 1 else False
        metas = op.default(
            *(torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta") if isinstance(t, torch.Tensor)
              else t for t in (query, key, value)), *([mask if mask is None else mask.to("meta"), True]
              if backend != "flash" else []), *rest, scale=scale)  # fmt: skip
        if mask is not None and mask.dtype == torch.bool:  # the CPU kernel takes a bias of the query's dtype
            mask = torch.zeros(mask.shape, dtype=query.dtype).masked_fill(~mask, float("-inf"))
        elif mask is not None and mask.dtype != query.dtype:
            mask = mask.to(query.dtype)
        out, lse = on_cpu(query, key, value, 0.0, is_causal, attn_mask=mask, scale=scale)
        made = []
        for i, meta in enumerate(metas):
            if not isinstance(meta, torch.Tensor):
                made.append(meta if meta is not None else torch.empty(0))
                continue
            real = torch.empty_strided(meta.shape, meta.stride(), dtype=meta.dtype).zero_()
            source = out if i == 0 else lse if i == 1 else None
            if source is not None and source.numel() == real.numel():
                real.copy_(source.reshape(real.shape))
            made.append(real)
        return tuple(made)

    return kernel


@contextlib.contextmanager
def on_host() -> Iterator[None]:
    """The GPU-only attention ops given CPU kernels for the block (a compiled graph run on the host)."""
    import torch

    lib = torch.library.Library("aten", "IMPL")
    try:
        for backend in GPU_ONLY:
            lib.impl(torchcompat.ATTENTION_OPS[backend], _on_cpu(backend), "CPU")
        yield
    finally:
        torchcompat.drop_library(lib)
