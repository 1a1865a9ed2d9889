"""The memory format a convolution's output has on the target's GPU, decided under the face as that GPU's torch
decides it, so the graph Inductor compiles holds the same layout (and so the same kernels around the convolution).

A convolution's output layout is not Inductor's choice: FakeTensor's convolution asks ATen which backend would run
(``_select_conv_backend``) and that backend's memory-format rule (``_conv_determine_backend_memory_format``). On a
host without cuDNN the answer is the slow CPU convolution, whose output is contiguous (NCHW) for a CUDA tensor;
on an H100 cuDNN gives a channels-last output whenever the input or the weight is channels-last, which Inductor's
layout optimisation makes them. The difference is not a count of kernels: the batch-norm and ReLU epilogue after
the convolution is one 1-D kernel over an NCHW output and a 2-D tiled (XBLOCK × YBLOCK) transpose over a
channels-last one (tests/test_model_capture.py holds the kernels and configs against an H100's own).

Restated from ``aten/src/ATen/native/ConvUtils.h`` (``cudnn_conv_suggest_memory_format``,
``miopen_conv_suggest_memory_format``), for CUDA-device tensors only:

- NVIDIA (cuDNN): channels-last (4-D weight) or channels-last-3d (5-D) when the input or the weight suggests it; a
  float64 input or weight stays contiguous. A depthwise convolution is read the same way (ATen's
  ``use_cudnn_depthwise`` takes cuDNN for channels-last inputs; not yet held against a GPU's capture:
  tests/data/compiled/conv.yaml is the matrix to run there).
- AMD (MIOpen): the same rule, but only where ``PYTORCH_MIOPEN_SUGGEST_NHWC=1`` is set (read here from the
  capture's environment, as ROCm torch reads it); otherwise contiguous. Inductor's layout optimisation is off on
  ROCm (``config.layout_optimization``), so a graph's inputs stay NCHW there anyway.

Not restated: cases where the GPU's torch would pick another backend for a CUDA tensor (cuDNN disabled by the user,
inputs needing 64-bit indexing); the answer there is still the library's rule above.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from harness.support import torchcompat

#: each convolution output's memory format decided here while Inductor lowered a graph, since the capture began
#: (Dynamo and AOT trace the same convolutions earlier, before Inductor's layout optimisation: not what its kernels
#: are made from); the capture's table keeps each once, in order
CHOSEN: list[str] = []

#: the environment variable ROCm torch reads to let MIOpen give channels-last outputs
MIOPEN_NHWC = "PYTORCH_MIOPEN_SUGGEST_NHWC"


def output_format(vendor: str, input_format: str, weight_format: str, weight_dims: int, float64: bool) -> str:
    """The target library's memory format for a convolution's output: ``contiguous``, ``channels_last`` or
    ``channels_last_3d``, from what the input and weight suggest (``suggest_memory_format``)."""
    if float64:
        return "contiguous"
    if vendor == "amd" and os.environ.get(MIOPEN_NHWC, "0") not in ("1", "true", "ON", "on", "True"):
        return "contiguous"
    wanted = {4: "channels_last", 5: "channels_last_3d"}.get(weight_dims)
    if wanted and wanted in (input_format, weight_format):
        return wanted
    return "contiguous"


def wear(vendor: str) -> None:
    """Put the target library's rule in front of ATen's for CUDA tensors, for the rest of this capture process."""
    import torch

    suggest = torchcompat.suggest_memory_format()
    names = {torch.channels_last: "channels_last", torch.channels_last_3d: "channels_last_3d"}
    formats = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last,
               "channels_last_3d": torch.channels_last_3d}  # fmt: skip

    def rule(original: Callable[..., Any]) -> Callable[..., Any]:
        def determine(input_: Any, weight: Any, backend: Any) -> Any:
            if input_.device.type != "cuda":
                return original(input_, weight, backend)
            chosen = output_format(vendor, names.get(suggest(input_), "contiguous"),
                                   names.get(suggest(weight), "contiguous"), weight.dim(),
                                   torch.float64 in (input_.dtype, weight.dtype))  # fmt: skip
            if torchcompat.inductor_lowering():
                CHOSEN.append(chosen)
            return formats[chosen]

        return determine

    torchcompat.replace_conv_memory_format(rule)
