"""Where a run came from, recorded in its results.json: the matrix and its hash, the Triton, torch, numpy and Python
it ran under, the host and the GPUs it saw, the harness's own commit (or installed version) and the command line."""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from harness.compiling import hiplinker
from harness.model.run_info import RunInfo


def _git_commit(repo: Path) -> str:
    """The commit of the harness's own checkout ('' where the harness is not the top of a git checkout: a copy
    without ``.git`` inside another repository must not record that repository's commit)."""
    git = shutil.which("git")
    if not git:
        return ""
    try:
        top = subprocess.run(
            [git, "-C", str(repo), "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=5
        )
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != repo.resolve():
            return ""
        out = subprocess.run([git, "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        # tracked files that differ from that commit: the run's code is not the commit's
        dirty = subprocess.run(
            [git, "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    if out.returncode != 0:
        return ""
    return out.stdout.strip() + ("+modified" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def _installed_harness() -> str:
    """Provenance of a harness that is not a git checkout: its installed distribution's version."""
    from importlib import metadata

    try:
        return f"triton-portability-harness {metadata.version('triton-portability-harness')} (installed)"
    except metadata.PackageNotFoundError:
        return ""


def gpus_seen() -> list[str]:
    """GPUs visible to this host, from the vendor tools (no torch import, no GPU context)."""
    from harness.device.detection import local_gpus

    return [f"{g.name} ({g.arch}{', ' + g.uuid if g.uuid else ''})" for g in local_gpus()]


def _version_of(module: str) -> str | None:
    from importlib import metadata

    dists = {"torch": ("torch",), "triton": ("triton", "pytorch-triton-rocm", "pytorch-triton"), "numpy": ("numpy",)}[
        module
    ]
    for dist in dists:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def machine_kind() -> str:
    """CPU model and the cores this process may use: two runs' compile costs compare only on the same kind."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), model)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores"


def run_info(matrix_name: str, matrix_path: str, matrix_hash: str, installed_triton: str | None) -> RunInfo:
    repo = Path(__file__).resolve().parents[2]  # harness/execution/provenance.py -> the checkout
    info = {
        "matrix": {"name": matrix_name, "path": matrix_path, "sha256": matrix_hash},
        "triton": installed_triton,
        "torch": _version_of("torch"),
        "numpy": _version_of("numpy"),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": machine_kind(),
        "gpus": gpus_seen(),
        "commit": _git_commit(repo) or _installed_harness(),
        "argv": sys.argv,
        "start": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "end": None,
        **(
            {"hip_lld": os.environ.get("TRITON_HIP_LLD_PATH", "")}
            if hiplinker.needs_external_lld(installed_triton)
            else {}
        ),
    }
    return RunInfo.from_json(info)
