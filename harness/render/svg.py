"""Inline SVG charts: horizontal bars and sparklines. No script, no fonts to fetch; every label escaped."""

from __future__ import annotations

import html
from typing import Any

PALETTE = ("#1b5e20", "#3b7dd8", "#c77c02", "#8e24aa", "#00838f", "#6d4c41")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


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
