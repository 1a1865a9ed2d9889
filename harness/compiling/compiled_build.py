"""One candidate config of a kernel TorchInductor generated (a run's case, :mod:`harness.intake.inductor.inductor_ref`), built
exactly as Inductor builds it, then judged like any config: artifacts, resources read from them with the vendor's
tools, flags against the target's limits, answered as any build is.

The kernel's module (the source :mod:`harness.intake.inductor.compiled` recorded under the target's face) is imported here
with no face: its decorator builds the ``CachingAutotuner`` from the ``triton_meta`` written into the source (the
target's ``DeviceProperties``, the signature, the divisibility attributes). The candidate is then compiled by
Inductor's own steps, minus the launcher: ``_create_compile_meta`` and ``_create_compile_options`` of that
autotuner, ``ASTSource(fn, signature, constants, attrs)`` and ``GPUTarget(device_type, cc, warp_size)``
(``CachingAutotuner._precompile_config`` in torch 2.13). So HIP's ``waves_per_eu`` reaches ``triton.compile`` as a
backend option exactly when Inductor forwards it, and NVIDIA builds carry Inductor's ``debug`` and
``enable_fp_fusion`` settings, not the harness's defaults.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from harness.compiling import limits
from harness.compiling.compile import binary_resources, write_artifacts
from harness.compiling.ptxas import triton_flags
from harness.model.build_facts import Inductor
from harness.model.ids import contained_path
from harness.model.inductor_policies import POLICIES
from harness.model.jobs import CompileJob
from harness.model.payloads import Artifact, Resources
from harness.model.replies import CompileReply
from harness.model.targets import Target
from harness.support.safe_files import write_atomic


def load_autotuner(source: str, name: str, scratch: Path) -> Any:
    """The ``CachingAutotuner`` a kernel module builds when imported (written to ``scratch`` by its hash)."""
    from harness.support import torchcompat

    torchcompat.keep_triton_driver()  # the module asks for the GPU driver; building needs none
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = scratch / f"{name}_{digest}.py"
    if not path.is_file():  # written whole: another worker may import it at once
        scratch.mkdir(parents=True, exist_ok=True)
        write_atomic(path, source.encode())
    module_name = f"harness_inductor_{name}_{digest}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[module_name] = module
    return getattr(sys.modules[module_name], name)


def compile_parts(
    source: str, name: str, config: Mapping[str, Any], scratch: Path
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """What Inductor's autotuner makes for one candidate before compiling it: (the autotuner, its compile meta:
    signature, constants, attributes, device; the options it passes); InductorModuleError in one line."""
    import triton

    kwargs = {k: v for k, v in config.items() if k not in ("num_warps", "num_stages")}
    cfg = triton.Config(kwargs, num_warps=int(config["num_warps"]), num_stages=int(config["num_stages"]))
    try:
        auto = load_autotuner(source, name, scratch)
        meta = auto._create_compile_meta(cfg)
        options = auto._create_compile_options(cfg, meta)
    except Exception as exc:  # noqa: BLE001 - the module is Inductor's code, its loading may raise anything
        said = " ".join(str(exc).split())[:240]
        raise InductorModuleError(f"loading Inductor's module: {type(exc).__name__}: {said}") from None
    return auto, meta, options


def _compile(source: str, name: str, config: Mapping[str, Any], scratch: Path) -> tuple[Any, dict[str, Any], Any]:
    """Inductor's steps for one candidate: (its autotuner, the options it passes, the compiled kernel); raises as
    loading the module or Triton's compile raised, each error saying which it was."""
    import triton
    from triton.backends.compiler import GPUTarget

    auto, meta, options = compile_parts(source, name, config, scratch)
    src = triton.compiler.ASTSource(auto.fn, meta["signature"], meta["constants"], meta["configs"][0])
    gpu = GPUTarget(meta["device_type"], meta["cc"], _warp_size(auto.device_props))
    return auto, options, triton.compile(src, target=gpu, options=options)


class InductorModuleError(Exception):
    """Inductor's generated module could not be loaded, or its compile meta made; one line."""


def compile_job(job: CompileJob) -> CompileReply:
    """A run's build of one config of Inductor's kernel (:mod:`harness.intake.inductor.inductor_ref`): the same steps as
    :func:`build`, answered as any build is, so its record is judged, reported, merged and compared like any other.
    A failure raises: the worker makes it the record's error, as for any compile."""
    import triton

    from harness.compiling.compile import cpu_seconds
    from harness.intake.inductor import inductor_ref
    from harness.model.kernel_refs import InductorRef, decode

    target = Target(**job.target)
    ref = decode(job.ref)
    if not isinstance(ref, InductorRef):
        raise ValueError(f"not a kernel Inductor generated: {job.ref[:80]!r}")
    slot = ref.slot(target.name, job.shape, job.dtype)
    if slot is None:
        raise ValueError(f"{ref.kernel} is not in {target.name}'s graph of {ref.entry} for {job.shape} {job.dtype}")
    source = inductor_ref.source(slot.source)
    start, cpu_start = time.perf_counter(), cpu_seconds()
    from harness.support.cache import cache_dir

    # the modules imported to build, by hash, in the harness's cache: none left in the run directory
    _, options, compiled = _compile(source, ref.kernel, job.config, cache_dir() / "inductor-modules")
    compile_s, compile_cpu_s = time.perf_counter() - start, cpu_seconds() - cpu_start
    out_root = Path(job.out)
    artifacts = write_artifacts(compiled.asm, out_root, list(job.artifact_parts))
    # the module Inductor wrote, once per case (every config of it is built from the same text), beside the
    # configs' folders: what a torch bump's compare diffs
    module = contained_path(out_root, *job.artifact_parts[:-1]) / "kernel.inductor.py"
    write_atomic(module, source.encode())
    artifacts["inductor"] = Artifact(path=module.relative_to(out_root).as_posix(), sha256=slot.source)
    res = binary_resources(compiled, target, out_root, artifacts, triton_flags(compiled.metadata), None)
    res["grid"] = inductor_ref.grid_of(slot, job.config)
    flags = tuple(limits.check(target, res, int(res["num_warps"])))
    return CompileReply(
        status="ok",
        compile_s=round(compile_s, 4),
        compile_cpu_s=round(compile_cpu_s, 4),
        resources=Resources.from_wire(res),
        flags=list(flags),
        fits=limits.fits(flags),
        artifacts=artifacts,
        cache_key=str(getattr(compiled, "hash", "") or ""),
        inductor=Inductor(
            entry=ref.entry,
            function=ref.fn,
            op=True if ref.op else None,
            kernel=ref.kernel,
            mode=ref.mode,
            torch=ref.torch,
            heuristic=slot.heuristic,
            position=slot.position,
            graph=slot.graph,
            source_sha256=slot.source,
            choices=slot.choices,
            numels=dict(slot.numels) or None,
            options=_plain(options),
            policies=tuple(POLICIES),
            attention=slot.attention or None,
            conv_layout=slot.conv_layout or None,
        ),
        triton=triton.__version__,
    )


def _warp_size(props: Any) -> int:
    """``DeviceProperties.warp_size_or_default`` (torch 2.13); torch 2.11 has only ``warp_size`` (None: 32)."""
    size = getattr(props, "warp_size_or_default", None) or getattr(props, "warp_size", None)
    return int(size or 32)


def _plain(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, (bool, int, float, str)) or v is None else repr(v) for k, v in options.items()}
