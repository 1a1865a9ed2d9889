"""tox's install command: pip, except on a ROCm host, where a tox env's PyPI triton and CUDA torch would stand in
for the host's ROCm build (``pytorch-triton-rocm``, ROCm torch) and judge nothing of it.

    python ci/pip_guard.py PIP_INSTALL_ARGS...        (tox.ini: install_command)

Refused with one line and exit 2 where the host has an AMD GPU driver or ROCm (``/dev/kfd``, ``/opt/rocm``);
there, run ``ci/gpu_nightly.sh`` (it keeps the host's torch and triton), or set HARNESS_ALLOW_PYPI_TRITON=1 for a
deliberate static-only env.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBES = ("/dev/kfd", "/opt/rocm")


def rocm_reason(probes: tuple[str, ...] = PROBES) -> str | None:
    if os.environ.get("HARNESS_ALLOW_PYPI_TRITON") == "1":
        return None
    seen = [p for p in probes if Path(p).exists()]
    if not seen:
        return None
    return (
        f"pip_guard: this is a ROCm host ({', '.join(seen)}): a tox env would install PyPI triton and torch in place "
        "of the host's pytorch-triton-rocm; run ci/gpu_nightly.sh instead, or set HARNESS_ALLOW_PYPI_TRITON=1 for a "
        "static-only env"
    )


def main(argv: list[str]) -> int:
    reason = rocm_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    return subprocess.call([sys.executable, "-m", "pip", "install", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
