"""The target catalogue: GPU limits and peaks as data, loaded from ``targets.yaml``.

Targets are plain frozen dataclasses; no code branches on a GPU name. Both
vendors' targets live side by side in one process, so one run can compile and
judge the same config for an H100 and an MI300X.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from harness.model.environments import Environment

CATALOGUE = Path(__file__).with_name("targets.yaml")

_NUMBERS = (
    "shared_per_block",
    "shared_per_sm",
    "max_threads_per_block",
    "max_regs_per_thread",
    "regs_per_sm",
    "max_warps_per_sm",
    "max_blocks_per_sm",
    "max_waves_per_simd",
    "simds_per_cu",
    "tmem_columns",
    "max_grid_x",
    "max_grid_y",
    "max_grid_z",
    "max_threads_per_launch",
    "sm_count",
    "hbm_tbps",
    "fp16_tflops",
    "fp8_tflops",
    "tf32_tflops",
    "fp32_tflops",
    "cache_bytes",
)
#: the catalogue peak each math dtype is measured against (bf16 shares fp16's on every target)
PEAK_FIELD = {
    "fp8": "fp8_tflops",
    "fp16": "fp16_tflops",
    "bf16": "fp16_tflops",
    "tf32": "tf32_tflops",
    "fp32": "fp32_tflops",
}


@dataclass(frozen=True)
class Target:
    """One GPU model. Integer limits are None where a vendor has no such notion."""

    name: str
    vendor: str  # "nvidia" | "amd"
    backend: str  # Triton backend: "cuda" | "hip"
    arch: str  # "sm_90", "gfx942", ...
    warp_size: int
    shared_per_block: int
    shared_per_sm: int
    max_threads_per_block: int
    max_regs_per_thread: int
    sm_count: int
    hbm_tbps: float
    fp16_tflops: float
    regs_per_sm: int | None = None
    max_warps_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    max_waves_per_simd: int | None = None
    simds_per_cu: int | None = None
    tmem_columns: int | None = None  # Blackwell tensor memory per SM, in 32-bit columns
    # launch limits: blocks per grid dimension (CUDA), work-items in one launch (HIP); None where none is stated
    max_grid_x: int | None = None
    max_grid_y: int | None = None
    max_grid_z: int | None = None
    max_threads_per_launch: int | None = None
    cache_bytes: int | None = None  # L2 plus any last-level cache behind it: what a cold-cache timing must flush
    fp8_tflops: float | None = None  # dense tensor peaks per math dtype; None where the GPU has no such math
    tf32_tflops: float | None = None
    fp32_tflops: float | None = None  # the vector (non-tensor) fp32 rate
    models: tuple[str, ...] = field(default=(), compare=False)  # device-name patterns of this model (device.match)
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # compile environments a matrix may sweep by name; a target is built under Triton's defaults unless it does
    named_environments: tuple[Environment, ...] = field(default=(), compare=False)

    def peak_tflops(self, math: str) -> float | None:
        """The dense peak of a math dtype (``fp8``, ``fp16``, ``bf16``, ``tf32``, ``fp32``; fp8 formats by prefix)."""
        peak: float | None = getattr(self, PEAK_FIELD["fp8" if math.startswith("fp8") else math])
        return peak

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("name", "vendor", "backend", "arch", "warp_size", *_NUMBERS)}


@lru_cache(maxsize=None)
def catalogue(path: Path = CATALOGUE) -> dict[str, Target]:
    """All targets by name."""
    doc = yaml.safe_load(path.read_text())
    sources: dict[str, str] = doc["sources"]
    out: dict[str, Target] = {}
    for name, entry in doc["targets"].items():
        values: dict[str, Any] = {"name": name}
        cited: list[tuple[str, str]] = []
        for key, val in entry.items():
            if key == "models":
                values[key] = tuple(val)
            elif key == "named_environments":
                values[key] = tuple(
                    Environment(e["name"], tuple(sorted((k, str(v)) for k, v in e["env"].items()))) for e in val
                )
            elif isinstance(val, dict):
                values[key] = val["value"]
                cited.append((key, sources[val["source"]]))
            else:
                values[key] = val
        out[name] = Target(**values, sources=tuple(cited))
    return out


def get(name: str) -> Target:
    return catalogue()[name]
