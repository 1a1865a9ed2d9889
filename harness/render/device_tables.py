"""report.md's and the terminal's view of what ran on a GPU: the tuned winner per case with its baselines, roof and
portability penalty, whether the launched binary was the static one, and timings that shared a GPU."""

from __future__ import annotations

from collections import defaultdict

from harness.analysis.findings import Findings
from harness.analysis.stability import stability_text
from harness.model.records import Record
from harness.model.runtime import GpuSlot, Runtime, Timing
from harness.model.timings import headline
from harness.render.text_table import table


def _us(value: float | None) -> str:
    return "" if value is None else (f"{value:.1f}" if value < 1000 else f"{value:.0f}")


def device_table(found: Findings, fmt: str = "github") -> str:
    """One row per case run on a GPU: winner, its time and rates, baselines, portability penalty."""
    body = []
    for r in sorted(
        (r for r in found.records if r.mode == "tune"), key=lambda r: (r.kernel, r.dtype, r.shape_id, r.target)
    ):
        rt = r.runtime or Runtime()
        timing = rt.timing or Timing()
        base = rt.baselines or {}
        base_txt = "; ".join(
            f"{n} {_us(headline(b)[0].median_us)} µs ({b.speedup:.2f}x)" if b.status == "ok" else f"{n} {b.status}"
            for n, b in base.items()
        )
        port = []
        for t, p in found.penalty(r).items():
            if p.slowdown is not None:
                port.append(
                    f"{t} {p.config_id} +{100 * (p.slowdown - 1):.0f}%"
                    + (" (proxy)" if str(p.source or "").startswith("proxy") else "")
                )
            else:
                port.append(f"{t} {p.note or p.status or 'n/a'}")
        roof = found.roof(r)
        gpu = rt.gpu or GpuSlot()
        body.append(
            [
                r.kernel,
                r.dtype,
                r.shape_id,
                r.target,
                str(gpu.index) if gpu.has("index") else "",
                r.status if r.status != "ok" else r.config_id,
                _us(timing.median_us),
                f"{_us(timing.p20_us)}–{_us(timing.p80_us)}" if timing else "",
                stability_text(timing, str(rt.timing_method or timing.method or "isolated")) if timing else "",
                f"{roof.rate:.4g} {roof.unit}" if roof else "",
                f"{roof.bound}-bound" if roof else "",
                roof.share_text if roof else "",
                base_txt,
                "/".join(
                    str(getattr(rt, k) if rt.has(k) else 0)
                    for k in ("configs_launched", "configs_failed", "configs_not_launched")
                ),
                "; ".join(port),
            ]
        )
    headers = [
        "kernel",
        "dtype",
        "shape",
        "target",
        "gpu",
        "winner",
        "median µs",
        "p20–p80 µs",
        "timed",
        "rate",
        "roof",
        "of peak",
        "baselines (speedup)",
        "run/failed/not launched",
        "portability penalty",
    ]
    return table(body, headers, fmt)


def launch_parity_lines(records: list[Record]) -> list[str]:
    """Whether the binaries launched on the device were the ones the static phase recorded (sha256)."""
    counts: dict[str, int] = defaultdict(int)
    differ = []
    for r in records:
        parity = r.runtime.launch_parity if r.mode == "compile" and r.runtime is not None else None
        if parity:
            counts[parity] += 1
            if parity == "differs":
                differ.append(f"{r.kernel} {r.dtype} {r.shape_id} {r.column} {r.config_id}")
    if not counts:
        return []
    out = [
        "launch parity (launched binary vs the static artifact, sha256): "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    ]
    out += [f"launched binary differs from the static build: {d}" for d in differ]
    return out


def gpu_overlaps(records: list[Record]) -> list[str]:
    """Cases whose GPU windows overlap on one device (same host, same GPU UUID): timings that shared a GPU.

    The per-GPU lock makes this empty; the audit is what shows it for a given run.
    """
    spans: dict[tuple[str, str], list[tuple[float, float, str]]] = {}
    for r in records:
        rt = r.runtime or Runtime()
        if r.mode == "tune" and rt.gpu_window and rt.gpu:
            gpu = rt.gpu.uuid or rt.gpu.index or ""
            start, end = rt.gpu_window
            spans.setdefault((r.host, gpu), []).append((start, end, f"{r.kernel} {r.dtype} {r.shape_id} {r.column}"))
    found = []
    for (host, gpu), items in spans.items():
        items.sort()
        for (_, e1, a), (s2, _, b) in zip(items, items[1:]):
            if s2 < e1:
                found.append(f"{a} and {b} held GPU {gpu} on {host or 'this host'} at once ({e1 - s2:.3f} s)")
    return found
