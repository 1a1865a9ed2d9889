"""NVIDIA spill figures from the assembly that produced the recorded cubin, never from another one.

ptxas's ``-v`` log is the only place spill stores and loads are reported. Triton runs
``ptxas -v`` itself when it compiles (its log is thrown away), with flags that change the
binary: ``--fmad=false`` under ``TRITON_DEFAULT_FP_FUSION=0``, ``--opt-level 0`` and ``-g``
under ``DISABLE_PTXAS_OPT``, ``-suppress-debug-info`` under ``TRITON_DISABLE_LINE_INFO``,
``PTXAS_OPTIONS``. So, in order:

1. Triton's own run, observed during ``triton.compile`` (:func:`observe`): its log belongs to
   the cubin Triton returned.
2. Otherwise (Triton loaded the kernel from its cache) a re-run of ptxas with Triton's flags
   (:func:`triton_flags`) on the recorded PTX, accepted only when its output is the recorded cubin:
   byte-identical (sha256), or identical in every section but the source-line table, which records
   the source files' modification times (:mod:`harness.compiling.cubin_sections`).
3. Otherwise the figures are unavailable, and the record says why.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from harness.compiling import cubin_sections

OWN_RUN = "ptxas -v of Triton's own compile of the recorded cubin"
RE_RUN = "ptxas -v re-run with Triton's flags; its output is byte-identical to the recorded cubin"
RE_RUN_LINES = (
    "ptxas -v re-run with Triton's flags; its output is the recorded cubin in every section but the "
    "source-line table (.debug_line records the source files' modification times)"
)


@contextmanager
def observe() -> Iterator[dict[str, Any]]:
    """While Triton compiles: the argv and ``-v`` log of the ptxas run Triton makes (stays empty on a cache hit).

    Triton calls ``subprocess.run(ptxas_cmd, ..., stderr=<log file>)`` and deletes the log after; the
    wrapper reads the log file once the call returns, before Triton removes it.
    """
    seen: dict[str, Any] = {}
    real = subprocess.run

    def run(argv: Any, *args: Any, **kwargs: Any) -> Any:
        result = real(argv, *args, **kwargs)
        if isinstance(argv, (list, tuple)) and argv and "ptxas" in Path(str(argv[0])).name and "-v" in argv:
            stderr = kwargs.get("stderr")
            name = getattr(stderr, "name", None)
            if isinstance(name, str) and os.path.isfile(name):
                seen["argv"] = [str(a) for a in argv]
                seen["log"] = Path(name).read_text(errors="replace")
        return result

    subprocess.run = run  # type: ignore[assignment]
    try:
        yield seen
    finally:
        subprocess.run = real  # type: ignore[assignment]


def _knob(section: str, name: str, env: str) -> bool:
    """A Triton knob's value: from ``triton.knobs`` where the release has it, else the environment variable."""
    try:
        import triton

        value = getattr(getattr(triton.knobs, section), name)
        return bool(value)
    except Exception:  # noqa: BLE001 - releases before knobs.py
        return os.environ.get(env, "").strip().lower() in ("1", "true", "on", "yes")


def triton_flags(metadata: Any) -> list[str]:
    """The flags Triton's ``make_cubin`` passes to ptxas for this build (Triton 3.6's rule), without paths."""
    if _knob("compilation", "disable_line_info", "TRITON_DISABLE_LINE_INFO"):
        debug = ["-lineinfo", "-suppress-debug-info"]
    elif _knob("nvidia", "disable_ptxas_opt", "DISABLE_PTXAS_OPT"):
        debug = ["-g"]
    else:
        debug = ["-lineinfo"]
    fmad = [] if getattr(metadata, "enable_fp_fusion", True) else ["--fmad=false"]
    no_opt = ["--opt-level", "0"] if _knob("nvidia", "disable_ptxas_opt", "DISABLE_PTXAS_OPT") else []
    extra = str(getattr(metadata, "ptx_options", "") or "").split()
    return [*debug, *fmad, "-v", *no_opt, *extra]


def flags_of(argv: list[str]) -> list[str]:
    """Triton's ptxas argv without the tool, the files and the architecture: what a re-run must repeat."""
    out, skip = [], False
    for i, a in enumerate(argv[1:], 1):
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
        elif a.startswith("--gpu-name") or a.endswith(".ptx") or (i == len(argv) - 1 and not a.startswith("-")):
            continue
        else:
            out.append(a)
    return out


def rerun(ptxas: str, ptx: Path, gpu_name: str, flags: list[str], cubin: Path) -> tuple[str | None, str]:
    """Assemble the recorded PTX again with ``flags``; (log, source) when the output is the recorded ``cubin``
    (byte for byte, or but for its line table), (None, why not) otherwise."""
    recorded = cubin.read_bytes()
    with tempfile.TemporaryDirectory(prefix="harness-ptxas-") as tmp:
        out = Path(tmp) / "kernel.cubin"
        proc = subprocess.run(
            [ptxas, *flags, f"--gpu-name={gpu_name}", str(ptx), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0 or not out.is_file():
            return None, f"unavailable: ptxas re-run failed ({proc.returncode}): {proc.stderr.strip()[:200]}"
        again = out.read_bytes()
    log = proc.stdout + proc.stderr
    if again == recorded:
        return log, RE_RUN
    if cubin_sections.same_code(again, recorded):
        return log, RE_RUN_LINES
    return None, (
        "unavailable: ptxas re-run with Triton's flags gave another binary than the recorded cubin "
        f"(sha256 {hashlib.sha256(again).hexdigest()[:12]} vs {hashlib.sha256(recorded).hexdigest()[:12]}): "
        "its figures would be of another build"
    )
