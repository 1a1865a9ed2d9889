"""Shared test helpers: run the CLI as a user would, compile one real case in-process."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m harness ARGS`` in a fresh process, output captured."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), full_env.get("PYTHONPATH", "")) if p)
    full_env.pop("TRITON_INTERPRET", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd or REPO, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def compile_one(kernel: str, dtype: str, shape: dict[str, Any], target: str, config: dict[str, Any],
                out: Path, **extra: Any) -> dict[str, Any]:
    """A real cross-compile through the same code path the workers run."""
    from harness import loader, targets
    from harness.compile import compile_job

    ref = loader.resolve(kernel, None)
    spec = loader.load(ref)
    job = {"ref": ref, "dtype": dtype, "shape": spec.normalize_shape(shape), "target": targets.get(target).to_dict(),
           "config": config, "out": str(out), "artifact_parts": ["artifacts", kernel, target, "cfg"], **extra}
    return compile_job(job)


def write_matrix(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
