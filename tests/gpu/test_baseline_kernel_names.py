"""The baselines' kernel names from a debug-mode graph capture are the names torch's profiler records.

The harness names a baseline's device kernels from a CUDA graph's DOT dump (:mod:`harness.device.kernel_names`);
the profiler (CUPTI) owns those names. For every baseline of every kernel of the default matrix, at its shapes, the
two lists must be equal, in launch order. Each graph's DOT text is written under ``$OUT`` when set (the CPU test's
data comes from there).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.device.kernel_names import _distinct, graph_kernels, parse_dot, profiler_kernels
from harness.intake import loader
from harness.matrix.cases import expand
from harness.matrix.reading import parse
from harness.support import tritoncompat

REPO = Path(__file__).resolve().parents[2]


def _baseline_calls() -> list[tuple[str, object]]:
    import torch

    calls, seen = [], set()
    for case in expand(parse(REPO / "matrices" / "smoke.yaml"), tritoncompat.installed_triton_version()):
        key = (case.ref, case.dtype, repr(case.shape))
        if case.is_interpret or key in seen:
            continue
        seen.add(key)
        spec = loader.load(case.ref)
        gen = torch.Generator(device="cuda").manual_seed(0)
        inputs = spec.inputs(case.shape, case.dtype, "cuda", gen)
        for name, fn in spec.baselines.items():
            calls.append(
                (f"{case.kernel} {case.dtype} {case.shape} {name}", lambda fn=fn, i=inputs, s=case.shape: fn(i, s))
            )
    return calls


def test_graph_names_equal_the_profilers_for_every_baseline() -> None:
    import torch

    calls = _baseline_calls()
    assert calls
    compared, differ = 0, []
    for label, call in calls:
        call()  # first call: compiles (torch.compile) and sets up libraries outside both readings
        torch.cuda.synchronize()
        from_graph = graph_kernels(call)
        assert from_graph is not None, f"{label}: not capturable"
        from_profiler = profiler_kernels(call)
        if _distinct(from_graph, 8) != from_profiler:
            differ.append(f"{label}:\n  graph    {from_graph}\n  profiler {from_profiler}")
        compared += 1
    print(f"{compared} baselines compared, {len(differ)} differ")
    assert not differ, "\n".join(differ)


@pytest.mark.skipif(not os.environ.get("OUT"), reason="writes the DOT dumps for the CPU test's data")
def test_write_dot_dumps() -> None:
    import torch

    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    x = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16)
    for name, call in {
        "matmul": lambda: a @ a,
        "gelu_chain": lambda: torch.clamp(torch.nn.functional.gelu(x + 1.0) * 0.5, -1, 1),
    }.items():
        call()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph(keep_graph=True)
        g.enable_debug_mode()
        with torch.cuda.graph(g):
            call()
        torch.cuda.synchronize()
        dot = Path(os.environ["OUT"]) / f"{name}.dot"
        g.debug_dump(str(dot))
        from_profiler = profiler_kernels(call)
        (Path(os.environ["OUT"]) / f"{name}.profiler.txt").write_text("\n".join(from_profiler) + "\n")
        # what the CPU test will read back: the dump holds kernels, and they are the profiler's, in order
        from_dot = parse_dot(dot.read_text())
        assert from_dot, f"{name}: the graph's dump names no kernel"
        assert _distinct(from_dot, 8) == from_profiler, f"{name}: dump {from_dot}, profiler {from_profiler}"
