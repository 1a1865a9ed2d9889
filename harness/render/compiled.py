"""``harness compiled``'s words: per compiled entry, shape and dtype, each target's kernel graph, what differs and
the findings (:mod:`harness.analysis.inductor_graphs` decides them), for the terminal and compiled.md."""

from __future__ import annotations

from collections.abc import Mapping

from harness.analysis.inductor_graphs import Adaptation


def terminal(found: list[Adaptation]) -> list[str]:
    lines = []
    for a in found:
        graphs = "; ".join(f"{g.target} {len(g.kernels)} kernel(s)" for g in a.graphs)
        lines.append(f"{a.entry} {a.shape} {a.dtype}: {graphs}")
        lines += [f"  differs: {d}" for d in a.differences]
        lines += [f"  finding: {f}" for f in a.findings]
    return lines


def markdown(name: str, policies: Mapping[str, str], found: list[Adaptation]) -> str:
    lines = [f"# Compiled entries: {name}", "", "What Inductor decides by timing on a device is a policy here:"]
    lines += [f"- {k}: {v}" for k, v in policies.items()]
    for a in found:
        lines += [
            "",
            f"## {a.entry} {a.shape} {a.dtype}",
            "",
            "| target | kernels (heuristic, configs) |",
            "| --- | --- |",
        ]
        for g in a.graphs:
            kernels = ", ".join(f"`{n}` ({h}, {c})" for n, h, c in g.kernels)
            choices = f"; {g.choices} max-autotune choices" if g.choices else ""
            lines.append(f"| {g.target} | {kernels}{choices} |")
        lines += [""] + [f"- differs: {d}" for d in a.differences] + [f"- finding: {f}" for f in a.findings]
    return "\n".join(lines) + "\n"
