"""Probe on a GPU host: which device kernels a call launches, read two ways, and what each way costs.

torch's profiler (CUPTI) names the kernels a baseline runs; starting it costs seconds per case on the H200
(docs/performance.md, run AL). A CUDA graph captured in debug mode names every kernel node it holds for the cost of
one capture. This prints, for a few library calls, both lists and both costs, and the graph's DOT text of the
first call (the format :mod:`harness.device.kernel_names` parses). Run: ``python3 benchmarks/investigations/kernel_names_probe.py``.
"""

from __future__ import annotations

import os
import tempfile
import time

import torch
import torch.nn.functional as F


def profiler_names(call):  # type: ignore[no-untyped-def]
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    seen = []
    for e in prof.events():
        if str(getattr(e, "device_type", "")).endswith("CUDA") and e.name not in seen:
            seen.append(e.name)
    return seen


def graph_dot(call) -> str:  # type: ignore[no-untyped-def]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    try:
        g = torch.cuda.CUDAGraph(keep_graph=True)
    except TypeError:  # torch before keep_graph
        g = torch.cuda.CUDAGraph()
    g.enable_debug_mode()
    with torch.cuda.graph(g):
        call()
    torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.dot")
        g.debug_dump(path)
        return open(path).read()


def main() -> None:
    dev = "cuda"
    a = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
    b = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
    q = torch.randn(4, 16, 4096, 64, device=dev, dtype=torch.float16)
    x = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    w = torch.randn(8192, device=dev, dtype=torch.bfloat16)
    logits = torch.randn(8192, 32000, device=dev, dtype=torch.bfloat16)
    target = torch.randint(0, 32000, (8192,), device=dev)
    compiled = torch.compile(lambda t: torch.clamp(F.gelu(t + 1.0) * 0.5, -1, 1))
    calls = {
        "matmul": lambda: a @ b,
        "sdpa": lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True),
        "softmax": lambda: torch.softmax(x, dim=-1),
        "rms_norm": lambda: F.rms_norm(x, (8192,), w),
        "gelu chain": lambda: torch.clamp(F.gelu(x + 1.0) * 0.5, -1, 1),
        "cross_entropy": lambda: F.cross_entropy(logits, target),
        "torch.compile": lambda: compiled(x),
    }
    env_before = dict(os.environ)
    started = time.perf_counter()
    compiled(x)
    torch.cuda.synchronize()
    print(f"torch.compile first call: {time.perf_counter() - started:.2f} s")
    changed = sorted(k for k in set(env_before) | set(os.environ) if env_before.get(k) != os.environ.get(k))
    print("environment changed by torch.compile:", {k: os.environ.get(k) for k in changed})
    for name, call in calls.items():
        call()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        dot = graph_dot(call)
        t1 = time.perf_counter()
        prof = profiler_names(call)
        t2 = time.perf_counter()
        print(f"== {name}: graph {1000 * (t1 - t0):.1f} ms, profiler {1000 * (t2 - t1):.1f} ms")
        print("profiler:", prof)
        print("dot:", "\n".join(ln for ln in dot.splitlines() if "| {ID |" in ln)[:3000])


if __name__ == "__main__":
    main()
