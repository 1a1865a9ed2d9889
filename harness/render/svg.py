"""Inline SVG charts: horizontal bars and sparklines. No script, no fonts to fetch; every label escaped."""

from __future__ import annotations

from harness.render.escaping import html_text

PALETTE = ("#1b5e20", "#3b7dd8", "#c77c02", "#8e24aa", "#00838f", "#6d4c41")


_e = html_text  # escaped, control characters dropped


def bar_chart(
    title: str,
    bars: list[tuple[str, float]],
    unit: str,
    width: int = 640,
    notes: list[str] | None = None,
    colours: list[str] | None = None,
    text_w: int = 150,
    label_w: int = 300,
) -> str:
    """Horizontal bars, one per (label, value); ``notes`` are printed after each value (e.g. "75% of peak")
    in the ``text_w`` pixels kept right of the longest bar; ``colours`` per bar (default: the first green,
    the rest blue)."""
    top = max((v for _, v in bars), default=0.0) or 1.0
    height = 22 * len(bars) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(title)}"><title>{_e(title)}</title>',
        f'<text x="0" y="14" font-size="13" font-weight="bold">{_e(title)}</text>',
    ]
    for i, (label, value) in enumerate(bars):
        y = 24 + 22 * i
        w = max(1.0, (width - label_w - text_w) * value / top)
        colour = colours[i] if colours else (PALETTE[0] if i == 0 else PALETTE[1])
        note = f" · {notes[i]}" if notes and notes[i] else ""
        parts.append(f'<text x="0" y="{y + 14}" font-size="12">{_e(label[: label_w // 7])}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="16" fill="{colour}"/>')
        parts.append(
            f'<text x="{label_w + w + 4:.1f}" y="{y + 14}" font-size="12">{value:.3g} {_e(unit)}{_e(note)}</text>'
        )
    return "".join(parts) + "</svg>"


def sparkline(values: list[float], width: int = 220, height: int = 36, marked_from: int | None = None) -> str:
    """A line through the values (oldest left); points from ``marked_from`` on drawn red (a step)."""
    if not values:
        return ""
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    step = (width - 8) / max(1, len(values) - 1)
    pts = [(4 + i * step, height - 4 - (height - 8) * (v - lo) / span) for i, v in enumerate(values)]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="'
        f'{"#c62828" if marked_from is not None and i >= marked_from else "#3b7dd8"}"/>'
        for i, (x, y) in enumerate(pts)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="trend"><polyline points="{path}" fill="none" stroke="#888" stroke-width="1.5"/>'
        f"{dots}</svg>"
    )


def roofline(
    title: str,
    bandwidth_tbps: float,
    compute: list[tuple[str, float]],
    points: list[tuple[str, float, float, bool]],
    width: int = 640,
    height: int = 360,
) -> str:
    """A log-log roofline: x FLOP per byte, y TFLOP/s; the bandwidth roof (y = bandwidth x intensity) up to each
    compute roof; ``points`` are (label, intensity, TFLOP/s, winner?): winners green, baselines blue, each with
    its label on hover."""
    import math

    xs = [p[1] for p in points] + [c / bandwidth_tbps for _, c in compute]
    ys = [p[2] for p in points] + [c for _, c in compute]
    x0, x1 = 10 ** math.floor(math.log10(min(xs) / 2)), 10 ** math.ceil(math.log10(max(xs) * 2))
    y0, y1 = 10 ** math.floor(math.log10(max(min(ys) / 2, 1e-6))), 10 ** math.ceil(math.log10(max(ys) * 1.5))
    left, top, w, h = 56, 24, width - 70, height - 60

    def X(v: float) -> float:
        return left + w * (math.log10(v) - math.log10(x0)) / (math.log10(x1) - math.log10(x0))

    def Y(v: float) -> float:
        return top + h - h * (math.log10(max(v, y0)) - math.log10(y0)) / (math.log10(y1) - math.log10(y0))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(title)}"><title>{_e(title)}</title>',
        f'<text x="0" y="14" font-size="13" font-weight="bold">{_e(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#bbb"/>',
        f'<text x="{left + w / 2}" y="{height - 8}" font-size="11" text-anchor="middle">FLOP per byte (log)</text>',
        f'<text x="10" y="{top + h / 2}" font-size="11" transform="rotate(-90 10 {top + h / 2})" '
        'text-anchor="middle">TFLOP/s (log)</text>',
    ]
    for exp in range(round(math.log10(x0)), round(math.log10(x1)) + 1):
        parts.append(
            f'<text x="{X(10**exp):.1f}" y="{top + h + 14}" font-size="10" text-anchor="middle">1e{exp}</text>'
        )
    for exp in range(round(math.log10(y0)), round(math.log10(y1)) + 1):
        parts.append(f'<text x="{left - 4}" y="{Y(10**exp) + 3:.1f}" font-size="10" text-anchor="end">1e{exp}</text>')
    for i, (math_name, peak) in enumerate(sorted(compute, key=lambda c: c[1])):
        ridge = peak / bandwidth_tbps
        parts.append(
            f'<polyline fill="none" stroke="{PALETTE[2 + i % 4]}" stroke-width="1.5" points="'
            f'{X(x0):.1f},{Y(bandwidth_tbps * x0):.1f} {X(ridge):.1f},{Y(peak):.1f} {X(x1):.1f},{Y(peak):.1f}"/>'
        )
        parts.append(
            f'<text x="{X(x1) - 4:.1f}" y="{Y(peak) - 4:.1f}" font-size="10" text-anchor="end">'
            f"{_e(math_name)} {peak:g} TFLOP/s</text>"
        )
    parts.append(
        f'<text x="{X(x0) + 4:.1f}" y="{Y(bandwidth_tbps * x0) - 6:.1f}" font-size="10">HBM {bandwidth_tbps:g} TB/s</text>'
    )
    for label, x, y, winner in points:
        colour = PALETTE[0] if winner else PALETTE[1]
        parts.append(
            f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="{4 if winner else 3}" fill="{colour}">'
            f"<title>{_e(label)}: {y:.3g} TFLOP/s at {x:.3g} FLOP/B</title></circle>"
        )
    return "".join(parts) + "</svg>"
