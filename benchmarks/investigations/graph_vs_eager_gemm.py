"""Why long GEMMs' speed-ups part between the harness's sustained timing and ``do_bench_cudagraph`` (issue 41).

In run BT the baseline (cuBLAS through ``torch.matmul``) of the three outliers read 3-4% faster by the sustained
method and by ``do_bench`` than by ``do_bench_cudagraph``, while the Triton winner read 2-5% slower. This times
``torch.matmul`` and one Triton GEMM at those shapes several ways on the same GPU, and says for each way which
kernel ran (torch.profiler) and the SM clock and power the GPU held meanwhile (``nvidia-smi -lms``):

- eager: ``do_bench`` (an L2 flush before each call);
- graph, same inputs: ``do_bench_cudagraph`` (calls replayed back to back on the same tensors);
- graph, rotated inputs: 20 calls captured in one graph cycling over copies larger than L2 (as the sustained
  method does).

``python3 benchmarks/investigations/graph_vs_eager_gemm.py`` on the GPU host; prints a markdown table.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import triton
import triton.language as tl
import triton.testing

SHAPES = ((8192, 8192, 8192), (4096, 14336, 4096))


@triton.jit
def _gemm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    pid = tl.program_id(0)
    n_m, n_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = pid // (GM * n_n)
    first = group * GM
    size = min(n_m - first, GM)
    pm = first + (pid % (GM * n_n)) % size
    pn = (pid % (GM * n_n)) // size
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty))


def _triton_call(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor):  # type: ignore[no-untyped-def]
    m, k = a.shape
    n = b.shape[1]
    grid = (triton.cdiv(m, 128) * triton.cdiv(n, 256),)
    return lambda: _gemm[grid](a, b, out, m, n, k, BM=128, BN=256, BK=64, GM=8, num_warps=8, num_stages=4)


class Clocks:
    """SM clock (MHz) and power (W) sampled every 20 ms by nvidia-smi while the block runs."""

    def __enter__(self) -> "Clocks":
        self.log = Path(tempfile.mktemp(suffix=".csv"))
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "20",
             "-f", str(self.log)]
        )  # fmt: skip
        time.sleep(0.3)
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.1)
        self.proc.terminate()
        self.proc.wait()
        rows = [ln.split(",") for ln in self.log.read_text().splitlines() if ln.strip()]
        busy = [(float(c), float(p)) for c, p in rows if float(p) > 150] or [(float(c), float(p)) for c, p in rows]
        self.sm = statistics.median(c for c, _ in busy)
        self.power = statistics.median(p for _, p in busy)


def _kernels(fn) -> str:  # type: ignore[no-untyped-def]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    return "; ".join(sorted(n[:60] for n in names))


def _graph_of(calls: list) -> torch.cuda.CUDAGraph:  # type: ignore[type-arg]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in calls:
            c()
    return graph


def _rotated_us(make, copies: int, per_graph: int = 20, reps: int = 15) -> float:
    calls = [make(i % copies) for i in range(per_graph)]
    graph = _graph_of(calls)
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        samples.append(1000.0 * start.elapsed_time(end) / per_graph)
    return statistics.median(samples)


def main() -> int:
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    print("| shape | what | way | µs | SM MHz | W | kernels |")
    print("|---|---|---|---|---|---|---|")
    gen = torch.Generator(device="cuda").manual_seed(0)
    for m, n, k in SHAPES:
        copies = 3
        a = [torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(copies)]
        b = [torch.randn(k, n, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(copies)]
        c = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        makers = {
            "torch.matmul": lambda i: lambda i=i: torch.matmul(a[i], b[i], out=c[i]),
            "triton 128x256x64 s4 w8": lambda i: _triton_call(a[i], b[i], c[i]),
        }
        for what, make in makers.items():
            call = make(0)
            call()
            torch.cuda.synchronize()
            eager_k = _kernels(call)
            graph = _graph_of([call])
            graph_k = _kernels(graph.replay)
            ways = {
                "do_bench (eager)": lambda: 1000.0 * triton.testing.do_bench(call, return_mode="median"),
                "do_bench_cudagraph": lambda: 1000.0 * triton.testing.do_bench_cudagraph(call, return_mode="median"),
                "graph, rotated copies": lambda: _rotated_us(make, copies),
            }
            for way, fn in ways.items():
                with Clocks() as clocks:
                    us = fn()
                kernels = eager_k if way.startswith("do_bench (") else graph_k
                print(f"| {m}x{n}x{k} | {what} | {way} | {us:.1f} | {clocks.sm:.0f} | {clocks.power:.0f} | {kernels} |")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
