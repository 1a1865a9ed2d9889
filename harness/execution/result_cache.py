"""Results of compile and interpreter jobs kept by content: an unchanged job is not run again.

A job's result is a function of its inputs alone: the job (kernel reference, target, config, shape, dtype,
compile environment, seed), the kernel's own source files (:func:`harness.intake.loader.source_hash`), the
harness's code that builds or checks it, every installed distribution with its version (Triton, torch, numpy, a
library a kernel comes from) and the environment variables Triton and its toolchains read. The key is a sha256 over
all of them, so an edit to any of these misses; deleting the cache costs time, never a result (as Triton's own).

A hit gives the stored result with its artifacts linked (or copied) into the new run's folder, and says so: a build
as ``compile_cache: "harness"`` (its ``compile_s`` is this lookup's, not a compile's, so compile-time comparisons
leave it out), an interpreter check with ``correctness.from_cache``. Only results that do not depend on chance are
kept: builds that compiled (``ok``) or that the compiler refused (``error``: the same job, source, code, packages and
variables fail the same way, so a warm run rebuilds none of them), and interpreter checks that passed or that the
interpreter cannot run (``interpret-unsupported``). A build that crashed its worker or ran out of time, and a check
that failed, always run again: those can depend on the machine's state; so does a result that reports a failure
of the host (a full disk, a read-only file system: :mod:`harness.model.host_failures`), which is never kept. Jobs with a side effect on this host (a build that also
prebuilds Triton's launcher for the local GPU) are never looked up. ``HARNESS_RESULT_CACHE=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.model import host_failures
from harness.model.jobs import Job, to_wire
from harness.model.vocabulary import INTERPRET_UNSUPPORTED
from harness.support.cache import cache_dir, reuse_enabled
from harness.support.safe_files import make_dirs

#: variables that change what Triton or its toolchains produce; the cache's own location does not
_ENV_PREFIXES = ("TRITON_", "AMDGCN_", "DISABLE_", "MLIR_", "LLVM_", "NVPTX_", "PTXAS_", "ROCM_", "HIP_", "CUDA_")
_ENV_IGNORED = ("TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR")
#: statuses worth keeping, per kind of job
KEPT = {"compile": ("ok", "error"), "interpret": ("ok", INTERPRET_UNSUPPORTED)}


def enabled() -> bool:
    return reuse_enabled()


def code_digest(root: Path) -> str:
    """Every ``.py`` and ``.yaml`` of the harness package at ``root``, by path and content.

    The whole package, not a list of the packages thought to decide a build: such a list named ``build`` after it
    had become ``compiling``, and a change to the build code itself kept serving the records built before it."""
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".yaml") and "__pycache__" not in p.parts)
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _code_digest() -> str:
    return code_digest(Path(__file__).resolve().parents[1])


@lru_cache(maxsize=1)
def _packages_digest() -> str:
    from importlib import metadata

    found = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata["Name"]})
    return hashlib.sha256("\n".join(found).encode()).hexdigest()


def _env() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(_ENV_PREFIXES) and k not in _ENV_IGNORED}


def key(kind: str, job: Job, kernel_hash: str) -> str | None:
    """The job's content key; None where the job must run (cache off, unknown kernel source, a side effect)."""
    if not enabled() or kernel_hash in ("", "unknown") or getattr(job, "prebuild_launcher", False):
        return None
    fields = {k: v for k, v in to_wire(job).items() if k not in ("out", "prebuild_launcher")}
    raw = json.dumps(
        [kind, fields, kernel_hash, _code_digest(), _packages_digest(), _env()], sort_keys=True, default=str
    )
    return hashlib.sha256(raw.encode()).hexdigest()


def _entry(digest: str) -> Path:
    return cache_dir() / "results" / digest[:2] / digest


def lookup(kind: str, digest: str | None, out_root: str | None) -> dict[str, Any] | None:
    """The stored result for ``digest``, its artifacts put under ``out_root``; None on a miss."""
    if digest is None:
        return None
    started = time.perf_counter()
    entry = _entry(digest)
    try:
        result: dict[str, Any] = json.loads((entry / "result.json").read_text())
        for art in (result.get("artifacts") or {}).values():
            _place(entry / "artifacts" / Path(art["path"]).name, Path(str(out_root)), art["path"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, half written or from another layout: the job runs
    if kind == "compile":
        return {**result, "compile_cache": "harness", "compile_s": round(time.perf_counter() - started, 4)}
    return {**result, "correctness": {**(result.get("correctness") or {}), "from_cache": True}}


def _place(source: Path, out_root: Path, rel: str) -> None:
    target = out_root / rel
    make_dirs(out_root, target.parent.relative_to(out_root))
    if target.exists():
        target.unlink()
    try:
        os.link(source, target)
    except OSError:  # another file system, or links refused: a copy
        shutil.copyfile(source, target)


def store(kind: str, digest: str | None, result: dict[str, Any], out_root: str | None) -> None:
    """Keep a result worth keeping (see :data:`KEPT`), with its artifacts; best effort, never the run's failure."""
    if digest is None or result.get("status") not in KEPT.get(kind, ()):
        return
    if host_failures.of_text(str(result.get("error") or "")):
        return  # the host's state, not the job's: the same job builds once the cause is gone
    entry = _entry(digest)
    if entry.exists():
        return
    tmp = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
    try:
        (tmp / "artifacts").mkdir(parents=True, exist_ok=True)
        arts = result.get("artifacts") or {}
        names = [Path(a["path"]).name for a in arts.values()]
        if len(set(names)) != len(names):
            return  # two artifacts of one name: this layout cannot keep them
        for art in arts.values():
            src = Path(str(out_root)) / art["path"]
            try:
                os.link(src, tmp / "artifacts" / src.name)
            except OSError:
                shutil.copyfile(src, tmp / "artifacts" / src.name)
        kept = {
            k: v
            for k, v in result.items()
            if k not in ("compile_cache", "compile_s", "compile_cpu_s", "compile_stages_s")
        }
        (tmp / "result.json").write_text(json.dumps(kept))
        tmp.rename(entry)
    except OSError:
        pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
