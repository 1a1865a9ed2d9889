"""An ``ld.lld`` for Triton releases that link AMD code objects with an external linker (3.4 and earlier).

From 3.5 Triton links hsaco in-process. Before that it runs ``ld.lld -flavor gnu -shared``,
looking at ``TRITON_HIP_LLD_PATH``, its own wheel, ``/opt/rocm/llvm/bin`` and ``/usr/bin`` in
that order; a machine without ROCm then fails every AMD build, and Debian's default ``lld``
(14) fails with ``unknown abi version``. When none of Triton's own places holds a linker,
this module offers one, in order: a versioned Debian/Ubuntu LLVM (``/usr/lib/llvm-N``, N ≥ 19,
the version checked to work), or the ``ziglang`` package from PyPI (its ``zig ld.lld``, through a
small wrapper that drops the ``-flavor gnu`` arguments zig does not take). The choice is made
once per run, before any worker starts, through ``TRITON_HIP_LLD_PATH``; the run's info records it.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from harness.support import tritoncompat

MIN_LLD = 19  # checked: Debian lld 14 fails ("unknown abi version"), lld-19 and zig's LLD 22 work
SYSTEM_ROOTS = (Path("/usr/lib"),)


def needs_external_lld(version: str | None) -> bool:
    return version is not None and bool(version) and tritoncompat.version_tuple(version)[:2] < (3, 5)


def _lld_major(path: Path) -> int | None:
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"LLD (\d+)\.", out)
    return int(found.group(1)) if found else None


def _tritons_own() -> list[Path]:
    """Where Triton itself looks after the environment variable (its wheel, ROCm); /usr/bin comes last."""
    try:
        import triton

        wheel = Path(triton.__file__).parent / "backends" / "amd" / "llvm" / "bin" / "ld.lld"
    except ImportError:
        wheel = None
    return [p for p in (wheel, Path("/opt/rocm/llvm/bin/ld.lld")) if p]


def _versioned_system() -> list[Path]:
    found = []
    for root in SYSTEM_ROOTS:
        for folder in root.glob("llvm-*"):
            suffix = folder.name.removeprefix("llvm-")
            if suffix.isdigit() and int(suffix) >= MIN_LLD and (folder / "bin" / "ld.lld").is_file():
                found.append((int(suffix), folder / "bin" / "ld.lld"))
    return [p for _, p in sorted(found, reverse=True)]


def _zig_wrapper(tools: Path) -> Path | None:
    """A script that runs the ziglang package's ``zig ld.lld`` without ``-flavor gnu``; None without ziglang."""
    try:
        import ziglang  # type: ignore[import-not-found]
    except ImportError:
        return None
    zig = Path(ziglang.__file__).parent / "zig"
    if not zig.is_file():
        return None
    tools.mkdir(parents=True, exist_ok=True)
    script = tools / "ld.lld"
    text = (
        "#!/bin/sh\n# written by the harness: Triton < 3.5 calls 'ld.lld -flavor gnu ...'; zig takes no -flavor\n"
        'if [ "$1" = "-flavor" ]; then shift 2; fi\n'
        f'exec "{zig}" ld.lld "$@"\n'
    )
    if not script.is_file() or script.read_text() != text:
        tmp = script.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        tmp.replace(script)
    return script


def provide(version: str | None, tools: Path) -> tuple[str, str]:
    """Make sure AMD builds under ``version`` have a working ld.lld; return (path or '', one-line note).

    Sets ``TRITON_HIP_LLD_PATH`` in this process (the workers inherit it) only when Triton would
    not find a working linker itself. A note that starts with "warning:" means AMD builds will fail.
    """
    if not needs_external_lld(version):
        return "", ""
    chosen = os.environ.get("TRITON_HIP_LLD_PATH")
    if chosen:
        ok = Path(chosen).is_file()
        return (
            (chosen, f"ld.lld from TRITON_HIP_LLD_PATH ({chosen})")
            if ok
            else (
                "",
                f"warning: TRITON_HIP_LLD_PATH={chosen} is not a file; AMD builds under triton {version} will fail",
            )
        )
    own = next((p for p in _tritons_own() if p.is_file()), None)
    if own:
        return str(own), f"ld.lld that Triton finds itself ({own})"
    tried = (
        ["TRITON_HIP_LLD_PATH (unset)"]
        + [str(p) for p in _tritons_own()]
        + [f"/usr/lib/llvm-N/bin/ld.lld (N >= {MIN_LLD})", "the ziglang package"]
    )
    for path in _versioned_system():
        os.environ["TRITON_HIP_LLD_PATH"] = str(path)
        return str(path), f"ld.lld {path} (set as TRITON_HIP_LLD_PATH)"
    wrapper = _zig_wrapper(tools)
    if wrapper and _lld_major(wrapper):
        os.environ["TRITON_HIP_LLD_PATH"] = str(wrapper)
        return str(wrapper), f"ld.lld from the ziglang package through {wrapper} (set as TRITON_HIP_LLD_PATH)"
    usr = Path("/usr/bin/ld.lld")
    major = _lld_major(usr) if usr.is_file() else None
    if major and major >= MIN_LLD:
        return str(usr), f"ld.lld that Triton finds itself ({usr}, LLD {major})"
    found = f"; {usr} is LLD {major}, too old for Triton's code objects" if major else ""
    return "", (
        f"warning: triton {version} links AMD code with an external ld.lld and none that works was found "
        f"(tried {', '.join(tried)}{found}): AMD builds will fail. `pip install ziglang` or "
        f"`apt-get install lld-{MIN_LLD}`, or set TRITON_HIP_LLD_PATH"
    )
