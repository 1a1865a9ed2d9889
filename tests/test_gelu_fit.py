"""fused_activation's Phi (a fitted logistic, not libdevice erf) holds fp32-level accuracy everywhere."""

from __future__ import annotations

import os

import pytest
from helpers import DATA, REPO

from harness.execution.pool import Worker

pytest.importorskip("torch")
PROBE = f"{DATA / 'normal_cdf_probe.py'}:SPEC"


def test_normal_cdf_is_within_2e7_of_float64_phi_over_all_fp32_inputs() -> None:
    from harness.intake import loader

    spec = loader.load(PROBE)
    assert spec.tolerance("fp32") == (2e-7, 0.0)
    worker = Worker("interpret", dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(REPO)))
    try:
        job = {
            "ref": PROBE,
            "dtype": "fp32",
            "shapes": [dict(s) for s in spec.interpret_shapes],
            "config": {"BLOCK": 1 << 16},
            "seed": 0,
        }
        result = worker.request("interpret", job, timeout=900)
    finally:
        worker.close()
    assert result["status"] == "ok", result.get("error")
    worst = result["correctness"]["max_abs_err"]
    assert 1e-9 < worst <= 2e-7, worst  # above zero: the probe really compared two different computations


def test_the_equal_formula_baseline_computes_what_the_kernel_computes() -> None:
    """The fused-activation baseline with the kernel's fitted Phi agrees with the exact-erf reference to fp32."""
    import torch

    from harness.intake import loader

    spec = loader.load(loader.resolve("fused_activation", None))
    fitted = spec.baselines["torch.compile, same fitted Phi"].__globals__["eager_fitted"]
    inputs = spec.make_inputs({"M": 64, "N": 1000}, "fp32", "cpu", torch.Generator().manual_seed(0))
    diff = (fitted(inputs, {"M": 64, "N": 1000}) - spec.reference(inputs, {"M": 64, "N": 1000})).abs().max()
    assert float(diff) < 1e-5
