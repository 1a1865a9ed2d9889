"""Which device kernels a baseline launches, by name: cuBLAS ``nvjet_*``, cuDNN ``*fprop*``, Inductor's ``triton_*``
(kernels only: the fills and copies a library issues around them are not listed).

Read from a CUDA/HIP graph: one call captured in debug mode, its DOT dump (``cudaGraphDebugDotPrint``) lists every
kernel node by its symbol in launch order, at the cost of one capture (2–20 ms on the H200). torch's profiler gives
the same names (``tests/gpu/test_baseline_kernel_names.py`` holds the two equal) but cost 3.5–6 s per case inside a GPU
worker (docs/performance.md, run AL), more than the baseline's timing itself. A call that cannot be captured
(an op graphs refuse) is named by the profiler, once per (baseline, shape, dtype, torch, device) and cached.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import re
import tempfile
from functools import lru_cache
from typing import Any, Callable

#: one node of the DOT text: its kind, then ``{ID | n (topoId: m) | symbol\<\<\<grid,block,smem\>\>\>}`` for a kernel
_NODE = re.compile(r'label="\{(?P<kind>[A-Z_]+)\s*\n\|\s*\{(?:ID \| )?(?P<id>\d+)[^|]*\|\s*(?P<rest>[^\n]*)')
#: copies and fills the profiler lists beside kernels ("Memset (Device)", "Memcpy DtoD ..."): not kernels, and a
#: library may issue them outside a capture (cuDNN's workspace fill), so neither reading lists them
_NOT_KERNELS = ("Memset", "Memcpy")


@lru_cache(maxsize=1)
def _cxa_demangle() -> Any:
    lib = ctypes.util.find_library("stdc++")
    if not lib:
        return None
    fn = ctypes.CDLL(lib).__cxa_demangle
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
    return fn


def demangle(symbol: str) -> str:
    """An Itanium-ABI symbol as the C++ runtime prints it (what torch's profiler shows); others as they are."""
    fn = _cxa_demangle()
    if fn is None or not symbol.startswith("_Z"):
        return symbol
    status = ctypes.c_int(0)
    ptr = fn(symbol.encode(), None, None, ctypes.byref(status))
    if not ptr or status.value != 0:
        return symbol
    try:
        return ctypes.string_at(ptr).decode(errors="replace")
    finally:
        ctypes.CDLL(ctypes.util.find_library("c")).free(ctypes.c_void_p(ptr))


def parse_dot(text: str) -> list[str]:
    """Kernel nodes of a graph's DOT dump, in capture order, demangled."""
    nodes: list[tuple[int, str]] = []
    for m in _NODE.finditer(text):
        if m.group("kind") == "KERNEL":
            symbol = m.group("rest").split("\\<\\<\\<")[0].strip().rstrip("}").strip()
            nodes.append((int(m.group("id")), demangle(symbol)))
    return [name for _, name in sorted(nodes)]


def graph_kernels(call: Callable[[], Any]) -> list[str] | None:
    """The kernels one ``call`` launches, read from a debug-mode graph capture of it; None where capture fails."""
    import torch

    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # lazy library set-up (cuBLAS workspaces) happens outside the capture
            call()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        try:
            graph = torch.cuda.CUDAGraph(keep_graph=True)  # the dump needs the graph kept after instantiation
        except TypeError:  # torch before keep_graph keeps it in debug mode
            graph = torch.cuda.CUDAGraph()
        graph.enable_debug_mode()
        with torch.cuda.graph(graph):
            call()
        torch.cuda.synchronize()
        with tempfile.TemporaryDirectory(prefix="harness-graph-") as tmp:
            path = os.path.join(tmp, "graph.dot")
            import warnings

            with warnings.catch_warnings():  # torch announces every dump with a UserWarning
                warnings.simplefilter("ignore")
                graph.debug_dump(path)
            text = open(path, encoding="utf-8", errors="replace").read() if os.path.isfile(path) else ""
        del graph
    except Exception:  # noqa: BLE001 - not capturable: the caller asks the profiler
        torch.cuda.synchronize()
        return None
    names = parse_dot(text)
    return names or None


def profiler_kernels(call: Callable[[], Any], limit: int = 8) -> list[str]:
    """The device kernels one call launches, as torch's profiler (CUPTI / roctracer) records them."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        names = [
            e.name
            for e in prof.events()
            if str(getattr(e, "device_type", "")).endswith("CUDA") and not e.name.startswith(_NOT_KERNELS)
        ]
    except Exception as exc:  # noqa: BLE001 - a profiler that cannot start costs the names, not the baseline
        return [f"(not profiled: {type(exc).__name__}: {str(exc)[:120]})"]
    return _distinct(names, limit)


def _distinct(names: list[str], limit: int) -> list[str]:
    seen: list[str] = []
    for name in names:
        if name[:200] not in seen:
            seen.append(name[:200])
    return seen[:limit]


def baseline_kernels(cache_key: list[Any], call: Callable[[], Any], limit: int = 8) -> list[str]:
    """The baseline's device kernels: from a graph capture, else from the profiler (cached under ``cache_key``:
    which library kernel cuBLAS or cuDNN picks for a shape changes only with torch or the device)."""
    from harness.support.cache import cache_dir

    names = graph_kernels(call)
    if names is not None:
        return _distinct(names, limit)
    raw = json.dumps(cache_key, default=str)
    path = cache_dir() / "baseline_kernels" / f"{hashlib.sha256(raw.encode()).hexdigest()}.json"
    try:
        return list(json.loads(path.read_text()))
    except (OSError, ValueError):
        pass
    names = profiler_kernels(call, limit)
    if names and not names[0].startswith("(not profiled"):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(names))
        tmp.replace(path)
    return names
