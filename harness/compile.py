"""One cross-compile: a (kernel, dtype, shape, config) for one target, to a record.

Runs inside a compile worker process (see :mod:`harness.workers`), never in the
pytest process: an aborting or hanging compile then costs only its own record.
Artifacts are written under the run's output directory and resource figures
are read back from them with the tools Triton ships.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from harness import launchspec, limits, loader, resources, tritoncompat
from harness.naming import contained_path
from harness.targets import Target

ARTIFACT_KINDS = ("ttir", "ttgir", "llir", "ptx", "cubin", "amdgcn", "hsaco")


def cache_dir() -> Path:
    """Where derived figures (ptxas -v output) are cached, keyed by artifact hash."""
    root = os.environ.get("HARNESS_CACHE_DIR") or Path.home() / ".cache" / "triton-portability-harness"
    return Path(root)


def write_artifacts(asm: dict[str, Any], out_root: Path, rel_parts: list[str]) -> dict[str, dict[str, str]]:
    """Write each IR / binary under ``out_root``; return kind -> {path, sha256}."""
    folder = contained_path(out_root, *rel_parts)
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, dict[str, str]] = {}
    for kind in ARTIFACT_KINDS:
        if kind not in asm:
            continue
        data = asm[kind]
        blob = data if isinstance(data, bytes) else str(data).encode()
        path = folder / f"kernel.{kind}"
        path.write_bytes(blob)
        written[kind] = {"path": path.relative_to(out_root).as_posix(),
                         "sha256": hashlib.sha256(blob).hexdigest()}
    return written


def _ptxas_arch(arch: str) -> str:
    major = int(arch.removeprefix("sm_").rstrip("a"))
    return f"sm_{major}a" if major >= 90 else f"sm_{major}"


def nvidia_resources(out_root: Path, artifacts: dict[str, dict[str, str]], arch: str) -> dict[str, Any]:
    """Registers, stack, local and spill bytes of a cubin, cached by the artifacts' hashes."""
    ptx_sha, cubin_sha = artifacts["ptx"]["sha256"], artifacts["cubin"]["sha256"]
    ptxas = tritoncompat.ptxas_for(int(arch.removeprefix("sm_").rstrip("a")))
    key = hashlib.sha256(f"{ptx_sha}:{cubin_sha}:{arch}:{ptxas}".encode()).hexdigest()
    cached = cache_dir() / "nvidia-resources" / f"{key}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    cuobjdump = tritoncompat.nvidia_tool("cuobjdump")
    if not cuobjdump or not ptxas:
        raise RuntimeError("cuobjdump/ptxas not found (Triton's wheel ships them in backends/nvidia/bin)")
    res = resources.parse_cuobjdump(resources.run_tool(
        [cuobjdump, "--dump-resource-usage", str(out_root / artifacts["cubin"]["path"])]))
    res.update(resources.parse_ptxas_verbose(resources.run_tool(
        [ptxas, "-v", "--gpu-name", _ptxas_arch(arch), str(out_root / artifacts["ptx"]["path"]), "-o", os.devnull])))
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(res))
    tmp.replace(cached)
    return res


def compile_job(job: dict[str, Any]) -> dict[str, Any]:
    """Compile one job (see :func:`harness.cases.compile_jobs`) and return its record fields."""
    spec = loader.load(job["ref"])
    target = Target(**job["target"])
    meta, options = spec.split_config(job["config"])
    known = tritoncompat.backend_option_names(target.backend)
    applied = {k: v for k, v in options.items() if k in known}
    ignored = sorted(k for k in options if k not in known)
    import triton

    # what Triton's launcher would compile for real tensors of this shape on this backend
    launch = launchspec.for_case(spec, job["shape"], job["dtype"], meta, applied,
                                 launchspec.backend_for(target.backend, target.arch, target.warp_size), target)
    src = launchspec.ast_source(spec.fn, launch)
    started_at = time.time()
    start = time.perf_counter()
    with tritoncompat.compile_observer() as seen:
        compiled = triton.compile(src, target=tritoncompat.gpu_target(target.backend, target.arch, target.warp_size),
                                  options=launch.options)
    compile_s = time.perf_counter() - start
    # cold (compiled from source) or warm (loaded from Triton's cache): compile times compare only like with like
    cache = seen.get("cache") or tritoncompat.cache_hit_from_files(str(getattr(compiled, "hash", "")), started_at)
    out_root = Path(job["out"])
    artifacts = write_artifacts(compiled.asm, out_root, job["artifact_parts"])
    num_warps = int(compiled.metadata.num_warps)
    res: dict[str, Any] = {"shared": int(compiled.metadata.shared), "num_warps": num_warps,
                           "threads": num_warps * target.warp_size}
    tmem = getattr(compiled.metadata, "tmem_size", None)
    if tmem is not None:
        res["tmem_columns"] = int(tmem)  # Blackwell tensor memory; Triton refuses more than the target has
    if target.backend == "cuda":
        res.update(nvidia_resources(out_root, artifacts, target.arch))
    else:
        res.update(resources.parse_amdgcn(compiled.asm["amdgcn"]))
    res.update(resources.comparable(target, res, num_warps))
    res.update(resources.instruction_counts(compiled.asm, target.backend))
    flags = limits.check(target, res, num_warps)
    extra = {"launcher": _prebuild_launcher(src, compiled)} if job.get("prebuild_launcher") else {}
    return {"status": "ok", "compile_s": round(compile_s, 4), "compile_cache": cache,
            "compile_stages_s": seen.get("stages_s") or {}, "resources": res, **extra,
            "flags": [f.to_dict() for f in flags], "fits": limits.fits(flags),
            "artifacts": artifacts, "ignored_options": ignored,
            "specialisation": launch.describe(list(spec.fn.arg_names)),
            "cache_key": str(getattr(compiled, "hash", "") or ""),
            "assumptions": list(launch.assumptions),
            "triton": triton.__version__}


def _prebuild_launcher(src: Any, compiled: Any) -> str:
    """Build Triton's host launcher for this kernel into its cache, on a host with the local GPU's driver.

    Triton builds one small C launcher per kernel specialisation on first launch (a C
    compile, 0.3-1.5 s); built here, in the parallel compile workers, the GPU worker
    finds it cached instead of building it serially while it holds the GPU. Best effort:
    a failure is reported and costs only the saving.
    """
    try:
        import importlib

        # the backend's launcher class itself, not ``driver.active``: that would import torch in every worker
        backend, name = ("nvidia", "CudaLauncher") if "ptx" in compiled.asm else ("amd", "HIPLauncher")
        getattr(importlib.import_module(f"triton.backends.{backend}.driver"), name)(src, compiled.metadata)
        return "prebuilt"
    except Exception as exc:  # noqa: BLE001
        return f"not prebuilt: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
