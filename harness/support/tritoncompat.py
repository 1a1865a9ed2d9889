"""The few places where Triton's cross-compilation API differs between releases.

Everything version-dependent about building a compile request lives here, so
the rest of the harness speaks one vocabulary. Supported: Triton 3.4 and later
(``ASTSource(fn, signature, constexprs=..., attrs=...)`` with every parameter in
the signature, ``triton.knobs``, host tensor descriptors). Older releases are refused
up front with one line (:func:`too_old`) rather than failing build by build: under
3.3.1 every compile failed (``triton.knobs`` is new in 3.4, which the launch
specialisation reads as Triton's launcher does), and 3.2 takes another signature form.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import re
import shutil
from pathlib import Path
from typing import Any, Iterator

#: compile options a config may set when Triton is not importable (validation on a machine without it).
TUNING_OPTIONS: dict[str, frozenset[str]] = {
    "cuda": frozenset({"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion"}),
    "hip": frozenset(
        {
            "num_warps",
            "num_stages",
            "num_ctas",
            "waves_per_eu",
            "matrix_instr_nonkdim",
            "kpack",
            "schedule_hint",
            "enable_fp_fusion",
        }
    ),
}

#: fields of a backend's options that are not a config's to set: the target and backend the harness passes,
#: what Triton fills itself (dtype tables, libraries, instrumentation), and ``ir_override`` (a file path read
#: at compile time: it would reach outside the run's inputs).
NOT_CONFIG_OPTIONS = frozenset(
    {
        "arch",
        "backend_name",
        "warp_size",
        "debug",
        "extern_libs",
        "supported_fp8_dtypes",
        "deprecated_fp8_dtypes",
        "deprecated_fp8_dot_operand_dtypes",
        "allowed_dot_input_precisions",
        "instrumentation_mode",
        "ir_override",
    }
)


OLDEST = (3, 4)  # the oldest Triton release the harness runs with


def too_old(version: str | None) -> str | None:
    """Why ``version`` (the importable Triton's) cannot run the harness, or None (also when none is importable)."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    if found is None or (int(found[1]), int(found[2])) >= OLDEST:
        return None
    return (
        f"triton {version} is older than {OLDEST[0]}.{OLDEST[1]}, the oldest release the harness supports "
        f"(it reads triton.knobs as Triton's launcher does, and builds host tensor descriptors): "
        f"install triton>={OLDEST[0]}.{OLDEST[1]}"
    )


#: the harness's own import of triton, taken once: (module, version). What every record says comes from here, so a
#: user module that puts another object in ``sys.modules["triton"]`` cannot change it (:func:`triton_replaced`)
_OWN: list[tuple[Any, str | None]] = []


def installed_triton_version() -> str | None:
    """Version of the importable ``triton`` module, whichever distribution provides it, as this process imported it
    first (the harness imports it before any user module: :func:`harness.intake.importing.import_attr`).

    ROCm hosts ship ``pytorch-triton-rocm``; reading the module, not the
    distribution, finds it too.
    """
    if not _OWN:
        try:
            import triton
        except Exception:  # noqa: BLE001 - any import failure means "not usable"
            return None
        _OWN.append((triton, str(getattr(triton, "__version__", "unknown"))))
    return _OWN[0][1]


def warm_compiler() -> None:
    """Do now what Triton does once per process on its first compile and keeps for the process's life: its key of
    its own installation (a hash of its Python sources and of libtriton, about 0.3 CPU-seconds on a small CI
    machine) and the import of Gluon, which its launch binder makes when it first specialises an argument (3.5 and
    later). A compile worker calls it while it warms up, before its first job arrives; the compile zygote calls it
    once, so that every worker it forks starts with both. Where this Triton has neither, nothing is done."""
    for name in ("triton.runtime.cache", "triton.compiler.compiler"):
        try:
            key = getattr(importlib.import_module(name), "triton_key", None)
        except ImportError:
            continue
        if callable(key):
            key()
            break
    with contextlib.suppress(ImportError):
        importlib.import_module("triton.experimental.gluon.nvidia.hopper")


def triton_replaced() -> bool:
    """Whether ``sys.modules["triton"]`` is no longer the module the harness imported (a user module swapped it)."""
    import sys

    return bool(_OWN) and sys.modules.get("triton") is not _OWN[0][0]


def version_tuple(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def pin_matches(pin: str, installed: str | None) -> bool:
    """Whether a matrix's Triton pin selects the installed release.

    A pin with a local label (``3.6.0+git1a2b3c4d``) must match exactly; one without
    matches every release it is a prefix of, component by component (``3.7`` matches
    3.7.0 and 3.7.1, ``3.6.0`` matches 3.6.0 and a local build 3.6.0+gitabc; ``3.7``
    never matches 3.70).
    """
    if installed is None:
        return False
    if pin == "installed" or pin == installed:
        return True
    if "+" in pin:
        return False
    wanted = pin.split(".")
    have = installed.split("+")[0].split(".")
    return len(wanted) <= len(have) and have[: len(wanted)] == wanted


def describe_pin(pin: str, installed: str | None) -> str:
    """How ``harness validate`` explains a pin."""
    if pin == "installed":
        return f"installed: whatever triton is importable (here {installed or 'none'})"
    how = "exactly" if "+" in pin else (f"{pin} and {pin}.x" if pin.count(".") < 2 else f"{pin} and its local builds")
    here = "runs here" if pin_matches(pin, installed) else f"deselected here (installed {installed or 'none'})"
    return f"{pin}: matches {how}; {here}"


def _options_class(backend: str) -> Any:
    try:
        if backend == "cuda":
            from triton.backends.nvidia.compiler import CUDAOptions as opts
        else:
            from triton.backends.amd.compiler import HIPOptions as opts
    except Exception:  # noqa: BLE001 - no Triton, or one without this backend
        return None
    return opts


def backend_option_types(backend: str) -> dict[str, tuple[type, ...]]:
    """Options a config may set on this backend, from the installed Triton's own options class, with the
    Python types each accepts (``Optional[int]`` -> int). Without Triton: :data:`TUNING_OPTIONS`, untyped."""
    import typing

    opts = _options_class(backend)
    if opts is None:
        return {name: () for name in TUNING_OPTIONS[backend]}
    out: dict[str, tuple[type, ...]] = {}
    for f in dataclasses.fields(opts):
        if f.name in NOT_CONFIG_OPTIONS:
            continue
        kind = f.type
        args = [a for a in typing.get_args(kind) if a is not type(None)] if typing.get_origin(kind) else [kind]
        out[f.name] = tuple(a for a in args if isinstance(a, type) and a in (int, bool, str, float))
    return out


def backend_option_names(backend: str) -> frozenset[str]:
    """Names of the options a config may set on this backend (see :func:`backend_option_types`)."""
    return frozenset(backend_option_types(backend))


def gpu_target(backend: str, arch: str, warp_size: int) -> Any:
    """A ``GPUTarget``; CUDA takes the integer compute capability (``sm_90`` -> 90)."""
    from triton.backends.compiler import GPUTarget

    if backend == "cuda":
        return GPUTarget("cuda", int(arch.removeprefix("sm_").rstrip("a")), warp_size)
    return GPUTarget("hip", arch, warp_size)


def nvidia_tool(name: str) -> str | None:
    """Path of a CUDA binary tool (``cuobjdump``, ``ptxas``) shipped in Triton's wheel."""
    try:
        import triton
    except Exception:  # noqa: BLE001
        return shutil.which(name)
    candidate = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
    if candidate.exists():
        return str(candidate)
    env = os.environ.get(f"TRITON_{name.upper()}_PATH")
    return env or shutil.which(name)


def ptxas_for(major: int) -> str | None:
    """The ptxas Triton itself uses for this compute capability.

    Releases differ (3.6 keeps the legacy ptxas for sm_90, 3.9 uses the newer
    one from sm_90 on and emits PTX the legacy one rejects), so ask Triton.
    """
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        tool = get_ptxas(major)
        path = getattr(tool, "path", tool)
        if isinstance(path, str) and path:
            return path
    except Exception:  # noqa: BLE001 - fall back to the wheel's binaries
        pass
    return (nvidia_tool("ptxas-blackwell") if major >= 100 else None) or nvidia_tool("ptxas")


@contextlib.contextmanager
def compile_observer() -> Iterator[dict[str, Any]]:
    """What Triton itself says about one ``triton.compile`` call: cache hit or miss, time per lowering stage.

    Uses Triton's compilation listener (``knobs.compilation.listener``, in 3.4 and later); on a
    release without one the dict stays empty and :func:`cache_hit_from_files` is the fallback.
    """
    seen: dict[str, Any] = {}
    knobs = getattr(importlib.import_module("triton"), "knobs", None)
    compilation = getattr(knobs, "compilation", None)
    if compilation is None or not hasattr(compilation, "listener"):
        yield seen
        return

    def listener(*, cache_hit: bool, times: Any, **_: Any) -> None:
        seen["cache"] = "hit" if cache_hit else "miss"
        stages = getattr(times, "lowering_stages", None) or []
        seen["stages_s"] = {name: round(us / 1e6, 4) for name, us in stages}

    previous = compilation.listener
    compilation.listener = listener
    try:
        yield seen
    finally:
        compilation.listener = previous


def cache_hit_from_files(cache_hash: str, started_at: float) -> str | None:
    """Hit or miss from Triton's cache directory: files older than the call were there before it."""
    try:
        from triton.runtime.cache import get_cache_manager

        folder = Path(get_cache_manager(cache_hash).cache_dir)
        stamps = [p.stat().st_mtime for p in folder.iterdir()]
    except Exception:  # noqa: BLE001 - a cache layout this release does not have: unknown
        return None
    return ("hit" if max(stamps) < started_at else "miss") if stamps else None


def clobbered_rocm_triton() -> str | None:
    """One line when PyPI's ``triton`` was installed beside a ROCm host's ``pytorch-triton-rocm`` (both provide the
    module ``triton``; whichever unpacked last wins, file by file). The ``[cpu]`` extra or a plain ``pip install
    triton`` does that on a ROCm host; the harness refuses rather than judge a mix of the two."""
    from importlib import metadata

    found = {}
    for name in ("triton", "pytorch-triton-rocm"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    if len(found) < 2:
        return None
    return (
        f"two distributions provide the module triton here: triton {found['triton']} (PyPI) and pytorch-triton-rocm "
        f"{found['pytorch-triton-rocm']} (ROCm); on a ROCm host install the harness without extras "
        "(pip install -e .), then pip uninstall triton and reinstall pytorch-triton-rocm"
    )
