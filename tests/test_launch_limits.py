"""Launch limits for every build: a grid's blocks per dimension (CUDA) and the work-items of one launch (HIP), each
cited in the catalogue, checked against the grid the build records (spec kernels, captured ops and Inductor's
kernels alike: every build goes through ``harness.compiling.limits``).

HIP's rule is held against TorchInductor's own (``_check_max_grid_x``, which scales XBLOCK up on ROCm exactly where
a launch would pass 2^31-1 work-items); the vector add is a real cross-compile for both vendors."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import compile_one

from harness.compiling import limits
from harness.model import targets

# 2^33 elements in blocks of 1024 on 4 warps: 2^23 blocks; 2^31 work-items on a 64-wide wave, 2^30 on a 32-wide one
N, CONFIG = 2**33, {"BLOCK": 1024, "num_warps": 4}


def test_a_launch_too_large_for_hip_is_flagged_on_mi300x_only(tmp_path: Path, isolated_cache: Path) -> None:
    amd = compile_one("vector_add", "fp32", {"N": N}, "mi300x", CONFIG, tmp_path / "amd")
    nv = compile_one("vector_add", "fp32", {"N": N}, "h100", CONFIG, tmp_path / "nv")
    assert amd["resources"]["grid"] == nv["resources"]["grid"] == [2**23]  # the kernel file's own grid
    assert {"resource": "launch_threads", "value": 2**31, "limit": 2**31 - 1, "severity": "error"} in amd["flags"]
    assert amd["fits"] is False
    assert nv["fits"] is True and not [f for f in nv["flags"] if f["resource"].startswith(("grid", "launch"))]


def test_hips_limit_is_where_inductor_scales_its_blocks_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inductor's own rule, called as it runs on ROCm and on CUDA: it leaves the block where the catalogue's limit
    passes the launch and grows it exactly where the limit flags it."""
    torch = pytest.importorskip("torch")
    from torch._inductor.runtime.triton_heuristics import _check_max_grid_x

    mi300x, h100 = targets.get("mi300x"), targets.get("h100")
    for n in (2**31, 2**32, 2**33, 2**34):
        blocks = n // 1024
        flagged = bool(limits.check(mi300x, {"grid": [blocks]}, 4))
        monkeypatch.setattr(torch.version, "hip", "6.4.0", raising=False)
        scaled_hip, _ = _check_max_grid_x({"x": n}, 1024, 4, warp_size=64)
        monkeypatch.setattr(torch.version, "hip", None, raising=False)
        scaled_cuda, _ = _check_max_grid_x({"x": n}, 1024, 4, warp_size=32)
        assert flagged is (scaled_hip > 1024), n
        assert not limits.check(h100, {"grid": [blocks]}, 4) and scaled_cuda == 1024, n


def test_cuda_limits_grid_y_and_z_and_an_unknown_grid_is_not_judged() -> None:
    h100, mi300x = targets.get("h100"), targets.get("mi300x")
    tall = limits.check(h100, {"grid": [1, 70000, 1]}, 4)
    assert [(f.resource, f.value, f.limit) for f in tall] == [("grid_y", 70000, 65535)]
    assert not limits.check(mi300x, {"grid": [1, 70000, 1]}, 4)  # HIP states no per-dimension block limit here
    assert not limits.check(h100, {"grid": None}, 4) and not limits.check(mi300x, {}, 4)
    cited = dict(h100.sources)
    assert "65535" in cited["max_grid_y"] and "2^31-1" in dict(mi300x.sources)["max_threads_per_launch"]
