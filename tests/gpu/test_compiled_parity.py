"""Compiled capture against Inductor's real output on this GPU (benchmarks/compiled_parity.py): for every entry of
tests/data/compiled/parity.yaml, the capture under this GPU's virtual device has the kernels the compiled wrapper
launches, their configs and their source exactly as Inductor writes them here, and the compiled function matches
eager PyTorch. The one difference allowed is the named max-autotune policy: the GPU times the choices and keeps its
fastest, the capture keeps the first Triton template."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import DATA, REPO


def test_the_capture_is_what_inductor_generates_on_this_gpu(tmp_path: Path) -> None:
    rows = _parity("parity.yaml", tmp_path)
    assert len(rows) == 8 and all(r["captured"] for r in rows)
    for r in rows:
        assert r["max_abs_err"] <= 0.02 * max(r["max_abs_ref"], 1.0), r  # bf16 against eager
        if r["entry"] == "mm_autotuned":  # the policy: the GPU's winner is timed, the capture's is the first template
            continue
        assert r["kernels_equal"] and r["configs_equal"] and all(r["sources_equal"].values()), r
        assert r["not_launched_equal"] and r["choices_equal"], r


def test_model_code_is_what_inductor_generates_on_this_gpu(tmp_path: Path) -> None:
    """tests/data/compiled/model_code.yaml (losses, logsumexp, an attention block, flex attention, a Llama layer,
    dynamic shapes, a convolution): every kernel, config and source as on this GPU, and the attention backend ATen
    picks here. Needs ``transformers`` (the Llama layer) where it runs."""
    rows = _parity("model_code.yaml", tmp_path)
    assert len(rows) == 8 and all(r["captured"] for r in rows), rows
    names = {"CUDNN_ATTENTION": "cudnn", "FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient", "MATH": "math"}
    for r in rows:
        assert r["kernels_equal"] and r["configs_equal"] and all(r["sources_equal"].values()), r
        assert [names[a] for a in r["attention_real"]] == r["attention_captured"], r


def _parity(matrix: str, out: Path) -> list[dict]:
    """benchmarks/compiled_parity.py on one of tests/data/compiled's matrices: its rows."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "compiled_parity.py"), str(DATA / "compiled" / matrix), str(out)],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return list(json.loads((out / "parity.json").read_text())["rows"])
