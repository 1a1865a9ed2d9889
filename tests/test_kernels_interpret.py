"""Each kernel against its torch reference under TRITON_INTERPRET=1, per dtype, per config tile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import DATA, REPO

from harness.execution.pool import Worker
from harness.intake import loader
from harness.matrix.cases import interpret_configs
from harness.matrix.configs import ConfigEntry

KERNELS = sorted(p.stem for p in (REPO / "kernels").glob("*.py"))  # every kernel the project ships
torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def interpreter() -> Worker:
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(REPO))
    worker = Worker("interpret", env)
    yield worker
    worker.close()


def _cases() -> list[tuple[str, str]]:
    return [(k, d) for k in KERNELS for d in loader.load(loader.resolve(k, None)).dtypes]


@pytest.mark.parametrize("kernel,dtype", _cases(), ids=[f"{k}-{d}" for k, d in _cases()])
def test_kernel_matches_reference_for_every_tile(interpreter: Worker, kernel: str, dtype: str) -> None:
    ref = loader.resolve(kernel, None)
    spec = loader.load(ref)
    if not spec.interpretable(dtype):
        pytest.skip(f"{kernel} declares {dtype} not interpretable")
    configs = [ConfigEntry(tuple(dict(c).items()), "x") for c in (*spec.nvidia_configs, *spec.amd_configs)]
    shapes = [spec.normalize_shape(s) for s in spec.interpret_shapes]
    for entry in interpret_configs(spec.tunables, tuple(configs)):
        result = interpreter.request(
            "interpret",
            {"ref": ref, "dtype": dtype, "shapes": shapes, "config": entry.as_dict(), "seed": 0},
            timeout=900,
        )
        assert result["status"] == "ok", (entry.as_dict(), result.get("error"))
        ran = [c for c in result["correctness"]["checks"] if c["status"] != "skipped"]
        skipped = [c for c in result["correctness"]["checks"] if c["status"] == "skipped"]
        assert ran and all(c["elements"] > 0 for c in ran)
        # a shape is skipped only where the kernel's own config_ok refuses the config, as on the device
        assert all(not spec.config_ok(dict(c["shape"]), entry.as_dict()) for c in skipped)


def test_a_wrong_reference_is_caught(tmp_path: Path) -> None:
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(REPO), WRONG="1")
    worker = Worker("interpret", env)
    try:
        result = worker.request(
            "interpret",
            {
                "ref": f"{DATA / 'misbehaving_kernel.py'}:SPEC",
                "dtype": "fp32",
                "shapes": [{"N": 100}],
                "config": {"BLOCK": 64},
            },
            timeout=900,
        )
    finally:
        worker.close()
    assert result["status"] == "mismatch" and "100 of 100 elements" in result["error"]


def test_compare_never_passes_nan_and_respects_tolerances() -> None:
    from harness.authoring.correctness import compare

    ref = torch.ones(8)
    assert compare(ref.clone(), ref, 0.0, 0.0).status == "ok"
    nan = ref.clone()
    nan[3] = float("nan")
    assert compare(nan, ref, 1.0, 1.0).status == "mismatch"
    off = ref + 1e-3
    assert compare(off, ref, 1e-2, 0.0).status == "ok"
    assert compare(off, ref, 1e-4, 0.0).status == "mismatch"
    assert compare(torch.ones(4), ref, 1.0, 1.0).status == "mismatch"


def test_bf16_arithmetic_is_really_not_interpretable(interpreter: Worker) -> None:
    """Why kernels may exclude bf16 from interpretation: if Triton fixes this, this test says so."""
    ref = loader.resolve("vector_add", None)
    result = interpreter.request(
        "interpret",
        {"ref": ref, "dtype": "bf16", "shapes": [{"N": 64}], "config": {"BLOCK": 64}, "seed": 0},
        timeout=900,
    )
    assert result["status"] == "mismatch"
