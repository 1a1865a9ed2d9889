"""Launch parity: is the binary Triton's JIT launched on the device the one the static phase recorded? Matched
by sha256 (the JIT's kernel found by the worker, harness.device.operations); a difference is diagnosed by cache
key and TTIR."""

from __future__ import annotations

from harness.model.records import Record
from harness.model.runtime import LaunchedBinary, Runtime


def launch_parity(rec: Record, runtime: Runtime) -> Runtime:
    """``runtime`` with the binary Triton's JIT launched compared with the one the static phase recorded (sha256).

    ``identical``: the static figures (registers, spills, LDS, instruction counts) are those
    of the kernel that ran; ``differs``: a finding (the static build is not what launches);
    ``not observed``: no binary could be tied to the launch (nothing new in the JIT cache and no
    kernel there with the record's cache key).
    """
    if not runtime.ok:
        return runtime
    launched = runtime.launched_binary or LaunchedBinary()
    binary = rec.artifacts.get(launched.kind or "")
    static = binary.sha256 if binary is not None else None
    if not launched.sha256 or not static:
        return runtime.updated(launch_parity="not observed")
    same_code = launched.sha256 != static and binary is not None and bool(binary.code_sha256)
    same_code = same_code and launched.code_sha256 == binary.code_sha256  # type: ignore[union-attr]
    if same_code:  # the code is the same; only the line table differs (it names the file the source was read from)
        return runtime.updated(
            launch_parity="identical",
            launch_parity_detail="same code: the binaries differ only in the line table (the source file's path)",
        )
    runtime = runtime.updated(launch_parity="identical" if launched.sha256 == static else "differs")
    if launched.sha256 != static:
        # same cache key: one compile request, two binaries (non-deterministic codegen, or a cache entry
        # replaced); other key, same TTIR: the options or environment differed; other TTIR: the launch
        # specialised differently (signature, attributes, constexprs)
        same_key = bool(rec.cache_key) and launched.cache_key == rec.cache_key
        ttir = rec.artifacts.get("ttir")
        same_ttir = ttir is not None and launched.ttir_sha256 == ttir.sha256
        detail = ("same cache key" if same_key else "other cache key") + (
            ", same TTIR" if same_ttir else ", other TTIR"
        )
        runtime = runtime.updated(launch_parity_detail=detail)
    return runtime
