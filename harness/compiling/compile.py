"""One cross-compile: a (kernel, dtype, shape, config) for one target, to a record.

Runs inside a compile worker process (see :mod:`harness.execution.pool`), never in the
pytest process: an aborting or hanging compile then costs only its own record.
Artifacts are written under the run's output directory and resource figures
are read back from them with the tools Triton ships.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.compiling import cubin_sections, launchspec, limits, ptxas, resources
from harness.intake import loader
from harness.model.build_facts import AutotuneFacts, Captured, ParamSpec
from harness.model.ids import contained_path
from harness.model.jobs import CompileJob
from harness.model.payloads import Artifact, Resources
from harness.model.replies import CompileReply
from harness.model.targets import Target
from harness.support import tritoncompat
from harness.support.cache import cache_dir
from harness.support.safe_files import make_dirs, write_atomic

ARTIFACT_KINDS = ("ttir", "ttgir", "llir", "ptx", "cubin", "amdgcn", "hsaco")


def write_artifacts(asm: Mapping[str, object], out_root: Path, rel_parts: list[str]) -> dict[str, Artifact]:
    """Write each IR / binary of Triton's ``compiled.asm`` under ``out_root``; return kind -> its artifact."""
    folder = contained_path(out_root, *rel_parts)
    make_dirs(out_root, folder.relative_to(out_root))
    written: dict[str, Artifact] = {}
    for kind in ARTIFACT_KINDS:
        if kind not in asm:
            continue
        data = asm[kind]
        blob = data if isinstance(data, bytes) else str(data).encode()
        path = folder / f"kernel.{kind}"
        write_atomic(path, blob)
        written[kind] = Artifact(
            path=path.relative_to(out_root).as_posix(),
            sha256=hashlib.sha256(blob).hexdigest(),
            code_sha256=cubin_sections.code_digest(blob) if kind in ("cubin", "hsaco") else None,
        )
    return written


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its children it has waited for (ptxas, a linker). A compile's
    cost is the difference across it: unlike wall time, it does not grow when other processes share the cores
    (a loaded CI runner, the other xdist workers), so two runs' compile costs compare across machine load."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _ptxas_arch(arch: str) -> str:
    major = int(arch.removeprefix("sm_").rstrip("a"))
    return f"sm_{major}a" if major >= 90 else f"sm_{major}"


def nvidia_resources(
    out_root: Path, artifacts: Mapping[str, Artifact], arch: str, name: str, flags: list[str], own_log: str | None
) -> dict[str, Any]:
    """Registers, stack, static shared and local bytes of the kernel ``name`` in the recorded cubin
    (``cuobjdump``), and its spill bytes from the ``ptxas -v`` log of that very binary (:mod:`harness.compiling.ptxas`):
    Triton's own run (``own_log``), or a re-run with Triton's ``flags`` whose output is the recorded cubin.
    Verified figures are cached by the cubin's sha256; unverifiable ones are recorded as such."""
    cubin_sha = artifacts["cubin"].sha256
    ptxas_path = tritoncompat.ptxas_for(int(arch.removeprefix("sm_").rstrip("a")))
    key = hashlib.sha256(f"{cubin_sha}:{name}:{ptxas_path}".encode()).hexdigest()
    cached = cache_dir() / "nvidia-resources" / f"{key}.json"
    if cached.is_file():
        figures: dict[str, Any] = json.loads(cached.read_text())
        return figures
    cuobjdump = tritoncompat.nvidia_tool("cuobjdump")
    if not cuobjdump or not ptxas_path:
        raise RuntimeError("cuobjdump/ptxas not found (Triton's wheel ships them in backends/nvidia/bin)")
    res: dict[str, Any] = resources.parse_cuobjdump(
        resources.run_tool([cuobjdump, "--dump-resource-usage", str(out_root / artifacts["cubin"].path)]), name
    )
    # sm_90 binaries that use shared memory carry the driver's 1 KiB per-block reserve as a shared section
    # (cuobjdump's SHARED 1024, the driver's static size 0: docs/figures.md): counted once, as the reserve
    res["reserved_shared"] = (
        min(res["static_shared"], resources.RESERVED_SMEM) if int(arch.removeprefix("sm_").rstrip("a")) >= 90 else 0
    )
    res["static_shared"] -= res["reserved_shared"]
    log, source = (
        (own_log, ptxas.OWN_RUN)
        if own_log
        else ptxas.rerun(
            ptxas_path, out_root / artifacts["ptx"].path, _ptxas_arch(arch), flags, out_root / artifacts["cubin"].path
        )
    )
    res["spill_source"] = source
    res["ptxas_flags"] = " ".join(flags)
    if log is None:  # no log of this binary: no spill figure rather than another build's
        return res
    res.update(resources.parse_ptxas_verbose(log, name))
    if res.get("ptxas_registers") not in (None, res["registers"]):
        raise RuntimeError(
            f"ptxas reports {res['ptxas_registers']} registers for {name}, the cubin "
            f"{res['registers']}: the log is not of this binary"
        )
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(res))
    tmp.replace(cached)
    return res


def binary_resources(compiled: Any, target: Target, out_root: Path, artifacts: Mapping[str, Artifact],
                     ptxas_flags: list[str], ptxas_log: str | None) -> dict[str, Any]:  # fmt: skip
    """What every build reads of its binary, whoever made it (a kernel's own compile, Inductor's options): Triton's
    metadata (shared memory, warps, CTAs, Blackwell tensor memory), the vendor tools' figures for the kernel's
    symbol, and the comparable and instruction-count figures; the limits are checked on exactly these."""
    num_warps = int(compiled.metadata.num_warps)
    res: dict[str, Any] = {
        "shared": int(compiled.metadata.shared),
        "num_warps": num_warps,
        "threads": num_warps * target.warp_size,
        "num_ctas": int(getattr(compiled.metadata, "num_ctas", 1) or 1),
    }
    tmem = getattr(compiled.metadata, "tmem_size", None)
    if tmem is not None:
        res["tmem_columns"] = int(tmem)  # Blackwell tensor memory; Triton refuses more than the target has
    name = str(compiled.metadata.name)
    res["function"] = name  # the kernel's symbol in the binary: whose figures these are
    if target.backend == "cuda":
        res.update(nvidia_resources(out_root, artifacts, target.arch, name, ptxas_flags, ptxas_log))
    else:
        res.update(resources.parse_amdgcn(compiled.asm["amdgcn"], name))
    res.update(resources.comparable(target, res, num_warps))
    res.update(resources.instruction_counts(compiled.asm, target.backend))
    return res


def compile_job(job: CompileJob) -> CompileReply:
    """Compile one job (made by :func:`harness.matrix.cases.compile_job`) and return its record fields."""
    target = Target(**job.target)
    spec = loader.load(job.ref).for_target(target)
    meta, options = spec.split_config(dict(job.config))
    known = tritoncompat.backend_option_names(target.backend)
    applied = {k: v for k, v in options.items() if k in known}
    ignored = sorted(k for k in options if k not in known)
    import triton

    # what Triton's launcher would compile for real tensors of this shape on this backend
    launch = launchspec.for_case(
        spec,
        dict(job.shape),
        job.dtype,
        meta,
        applied,
        launchspec.backend_for(target.backend, target.arch, target.warp_size),
        target,
    )
    src = launchspec.ast_source(spec.fn, launch)
    started_at = time.time()
    start, cpu_start = time.perf_counter(), cpu_seconds()
    with tritoncompat.compile_observer() as seen, ptxas.observe() as assembled:
        compiled = triton.compile(
            src, target=tritoncompat.gpu_target(target.backend, target.arch, target.warp_size), options=launch.options
        )
    compile_s, compile_cpu_s = time.perf_counter() - start, cpu_seconds() - cpu_start
    # cold (compiled from source) or warm (loaded from Triton's cache): compile times compare only like with like
    cache = seen.get("cache") or tritoncompat.cache_hit_from_files(str(getattr(compiled, "hash", "")), started_at)
    out_root = Path(job.out)
    artifacts = write_artifacts(compiled.asm, out_root, list(job.artifact_parts))
    ptxas_flags = ptxas.flags_of(assembled["argv"]) if assembled.get("argv") else ptxas.triton_flags(compiled.metadata)
    res = binary_resources(compiled, target, out_root, artifacts, ptxas_flags, assembled.get("log"))
    res["grid"] = _grid(spec, dict(job.shape), dict(job.config))
    num_warps = int(res["num_warps"])
    flags = limits.check(target, res, num_warps)
    return CompileReply(
        status="ok",
        compile_s=round(compile_s, 4),
        compile_cpu_s=round(compile_cpu_s, 4),
        compile_cache=cache,
        compile_stages_s=seen.get("stages_s") or {},
        resources=Resources.from_wire(res),
        launcher=_prebuild_launcher(src, compiled) if job.prebuild_launcher else "",
        flags=list(flags),
        fits=limits.fits(flags),
        artifacts=artifacts,
        ignored_options=ignored,
        specialisation={
            name: ParamSpec.from_wire(entry) for name, entry in launch.describe(list(spec.fn.arg_names)).items()
        },
        cache_key=str(getattr(compiled, "hash", "") or ""),
        assumptions=list(launch.assumptions),
        autotune=autotune_facts(
            spec,
            launchspec.argument_values(spec, dict(job.shape), job.dtype, meta, target)[0],
            dict(job.shape),
            job.dtype,
        )
        if spec.decorations
        else AutotuneFacts(),
        captured=Captured.from_wire(spec.captured) if spec.captured else Captured(),
        triton=triton.__version__,
    )


def autotune_facts(spec: Any, values: dict[str, Any], shape: Mapping[str, int], dtype: str) -> AutotuneFacts:
    """What a decorated kernel's layers decided for this build: the autotune ``key`` values of the case, the
    size of the library's list, the heuristics' constexprs, and how the list is pruned."""
    d = spec.decorations

    def plain(v: Any) -> Any:
        return v if isinstance(v, (int, float, bool, str, type(None))) else repr(v)

    return AutotuneFacts(
        layers=tuple(d.layers),
        key={k: plain(values.get(k)) for k in d.autotune_key},
        autotune_configs=len(d.autotune_configs),
        heuristics={n: plain(values.get(n)) for n, _ in d.heuristics},
        prune=_prune_note(spec, shape, dtype) if d.prune else None,
        pre_hooks=True if d.pre_hooks else None,
    )


def _prune_note(spec: Any, shape: Mapping[str, int], dtype: str) -> str:
    """Whether the autotuner's pruning ran here (and kept how many of the list), or why not."""
    from harness.authoring.decorated import prune

    d = spec.decorations
    if "early_config_prune" not in d.prune:
        return f"{d.prune}: needs timings, not applied without a GPU"
    _, note = prune(spec.decorated, list(d.autotune_configs), spec.stand_in_nargs(dict(shape), dtype))
    return note


def _grid(spec: Any, shape: Mapping[str, int], config: Mapping[str, Any]) -> list[int] | None:
    """The launch grid the kernel file's ``grid`` gives for this shape and config (None without one)."""
    if spec.grid is None:
        return None
    try:
        return [int(g) for g in spec.grid(shape, config)]
    except Exception:  # noqa: BLE001 - a grid that needs the device (SM count) is not known statically
        return None


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
