"""report.html's per-kernel tables: every config row x target column with its verdict, each verdict linking that
target's own artifact folder (PTX / cubin for an NVIDIA column, AMDGCN / hsaco for an AMD one), configs in numeric
order (``K32`` before ``K128``), counts by config."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any
from urllib.parse import quote

from harness.analysis.rows import Row
from harness.render import tables as md_tables
from harness.render.escaping import html_text

CLASS = {"fits": "fits", "at risk": "at-risk", "exceeds": "exceeds", "failed": "failed", "incomplete": "incomplete"}


_e = html_text


def natural(text: str) -> tuple[Any, ...]:
    """A sort key that orders the numbers inside ids by value: K32 < K64 < K128."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text))


def _folder(rec: Any) -> str | None:
    """The artifact folder of one build, relative to the page (artifact paths are the run's own, or as
    ``harness report`` rebased them), or None without artifacts."""
    path = next((a.path for a in rec.artifacts.values() if a.path), None) if rec is not None else None
    return quote(str(path).rsplit("/", 1)[0]) + "/" if path else None


def _figures(rec: Any) -> str:
    """A build's figures as report.md's columns say them (smem B, regs, spill B, occ), then its MMA count."""
    if rec is None or rec.status != "ok":
        return ""
    _, smem, regs, spill, occ = md_tables.cell_texts(rec, None)
    res = rec.resources
    mma = next((f"{n} {k}" for k in ("wgmma", "mma", "tcgen05_mma", "mfma") if (n := getattr(res, k, None))), "0 MMA")
    return " · ".join(x for x in (smem, f"{regs} regs" if regs else "", f"spill {spill}", occ, mma) if x)


def tables(rows: list[Row]) -> list[str]:
    out = [
        "<h2>Portability</h2>",
        "<p class=note>Per target, the verdict of its build under Triton's defaults; at risk: it fits by default "
        "but not under a swept compile environment. Hover a cell for the reasons; a verdict links that target's "
        "own artifacts.</p>",
    ]
    by_kernel: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_kernel[row.kernel].append(row)
    for kernel in sorted(by_kernel):
        krows = sorted(
            by_kernel[kernel], key=lambda r: (r.dtype, natural(r.shape_id), natural(r.triton), natural(r.config_id))
        )
        targets = sorted({t for r in krows for t in r.judged.targets})
        configs = [r for r in krows if not r.judged.duplicate]  # a config built into another's binary: that one
        counts = Counter(r.judged.category for r in configs)
        summary = f"{len(configs)} config(s): " + ", ".join(f"{n} {c}" for c, n in counts.most_common())
        out.append(f"<h3>{_e(kernel)}</h3><p class=note>{_e(summary)}</p>")
        out.append(
            "<table><tr><th>dtype</th><th>shape</th><th>triton</th><th>config</th><th>space</th><th>cpu interp</th>"
            + "".join(f"<th>{_e(t)}<br><small>smem B · regs · spill B · occ · MMA</small></th>" for t in targets)
            + "<th>portability</th></tr>"
        )
        for r in krows:
            cells = []
            for t in targets:
                tv = r.judged.targets.get(t)
                if tv is None:
                    cells.append("<td></td>")
                    continue
                reasons = "; ".join(tv.reasons) + (f" (same binary as {tv.duplicate_of})" if tv.duplicate_of else "")
                folder = _folder(tv.decided_by)  # this target's own build: its PTX / cubin or AMDGCN / hsaco
                said = f'<a href="{_e(folder)}">{_e(tv.verdict)}</a>' if folder else _e(tv.verdict)
                cells.append(
                    f'<td class={CLASS[tv.verdict]} title="{_e(reasons)}">{said}'
                    + (f"<br><small>{_e(reasons[:80])}</small>" if reasons else "")
                    + (f"<br><small>{_e(figures)}</small>" if (figures := _figures(tv.decided_by)) else "")
                    + "</td>"
                )
            out.append(
                f"<tr><td>{_e(r.dtype)}</td><td>{_e(r.shape_id)}</td><td>{_e(r.triton)}</td>"
                + f"<td>{_e(r.config_id)}</td><td>{_e(r.origin)}</td><td>{_e(md_tables.interp_text(r.interpret))}</td>"
                + "".join(cells)
                + f"<td>{_e(r.judged.text)}</td></tr>"
            )
        out.append("</table>")
    return out
