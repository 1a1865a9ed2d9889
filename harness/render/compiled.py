"""Compiled entries in words: per entry, shape and dtype, each target's kernel graph, what differs and the findings
(:mod:`harness.analysis.inductor_graphs` decides them), for a run's terminal summary, compiled.md and compiled.html
(``harness compiled``) and report.md's section (:func:`report_section`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.analysis import gate
from harness.analysis.compiled_compare import CompiledComparison
from harness.analysis.inductor_graphs import LAYOUT, Adaptation, Graph
from harness.render.escaping import md


def vendor_line(g: Graph) -> str:
    """What one target gets for an entry, in a line: its kernels and configs, their findings, how many were checked
    and how, and what the target's libraries decided around them (attention backend, convolution layout)."""
    configs = sum(n for _, _, n in g.kernels)
    found = gate.said(g.counts) if g.counts is not None else "no findings"
    parts = [f"{g.target}: {len(g.kernels)} kernel(s), {configs} config(s): {found}", f"checked {_checked(g)}"]
    if g.attention:
        parts.append(f"attention {', '.join(g.attention)}")
    if g.conv_layout:
        parts.append(f"convolution output {', '.join(LAYOUT.get(v, v) for v in g.conv_layout)}")
    return " · ".join(parts)


def answer(a: Adaptation) -> list[str]:
    """An entry's answer, first: a line per target (:func:`vendor_line`), why configs went unchecked with how many,
    then what differs between the targets."""
    lines = [vendor_line(g) for g in a.graphs]
    lines += [f"not checked ({n}): {why}" for why, n in a.unchecked]
    return lines + [f"differs: {d}" for d in a.differences]


def terminal(found: list[Adaptation]) -> list[str]:
    """A title line per entry, shape and dtype, then its answer indented under it (the findings themselves are in
    the run's worst-findings lines and report.md)."""
    lines = []
    for a in found:
        lines.append(f"{a.entry} {a.shape} {a.dtype}")
        lines += [f"  {line}" for line in answer(a)]
    return lines


def _checked(g: Graph) -> str:
    passed, failed, unchecked = g.checked
    said = (
        [f"{passed} pass"]
        + ([f"{failed} FAIL"] if failed else [])
        + ([f"{unchecked} not checked"] if unchecked else [])
    )
    return ", ".join(said) + (f" ({g.on_gpu} on the GPU)" if g.on_gpu else "")


#: what compiled.md and compiled.html say first of a run that did not finish
INCOMPLETE = (
    "INCOMPLETE: this run was interrupted before every case finished; what follows covers only the cases that did. "
    "Run the same harness compiled command again for the whole picture."
)


@dataclass(frozen=True)
class Page:
    """What compiled.md and compiled.html show: the run's name, Inductor's policies, each entry's graphs, whether
    the run was interrupted and the entries left out (their lines)."""

    name: str
    policies: Mapping[str, str]
    found: list[Adaptation]
    incomplete: bool = False
    left_out: tuple[str, ...] = ()


def markdown(page: Page) -> str:
    name, policies, found = page.name, page.policies, page.found
    lines = [f"# Compiled entries: {name}", ""] + ([f"**{INCOMPLETE}**", ""] if page.incomplete else [])
    if page.left_out:
        lines += ["**Not captured** (left out of this run; fix the entry and run again):", ""]
        lines += [f"- {md(line)}" for line in page.left_out] + [""]
    # each entry's answer first; how Inductor's device-timed decisions were made here after them
    lines += _graphs(found, "##")
    lines += ["", "What Inductor decides by timing on a device is a policy here:", ""]
    lines += [f"- {k}: {v}" for k, v in policies.items()]
    return "\n".join(lines) + "\n"


def report_section(policies: tuple[str, ...], found: list[Adaptation]) -> list[str]:
    """report.md's section for a run's compiled entries (empty without any)."""
    if not found:
        return []
    from harness.model.inductor_policies import POLICIES

    lines = ["## Compiled functions: what each target gets", "",
             "Per entry, shape and dtype, each target's kernel graph as TorchInductor generated it under that "
             "target's virtual device, every config its heuristics list built, checked in its graph against eager "
             "and judged below."]  # fmt: skip
    lines += _graphs(found, "###")
    lines += ["", "What Inductor decides by timing on a device is a named policy here, never a measurement:", ""]
    lines += [f"- {name}: {md(POLICIES.get(name, '?'))}" for name in policies]
    return lines + [""]


def _graphs(found: list[Adaptation], level: str) -> list[str]:
    lines: list[str] = []
    for a in found:
        lines += ["", f"{level} {md(a.entry)} {md(a.shape)} {md(a.dtype)}", ""]
        lines += [f"- {md(line)}" for line in answer(a)]
        lines += ["", "| target | kernels (heuristic, configs) |", "| --- | --- |"]
        for g in a.graphs:
            kernels = ", ".join(f"{md(n)} ({md(h)}, {c})" for n, h, c in g.kernels)
            choices = f"; {g.choices} max-autotune choices" if g.choices else ""
            lines.append(f"| {g.target} | {kernels}{choices} |")
        lines += [""] + [f"- finding: {md(f)}" for f in a.findings]
    return lines


def _wrapped(text: str, indent: str, width: int = 118) -> list[str]:
    """A detail line whole, folded at ``width`` with its continuation indented under it (a source line's ``-`` and
    ``+`` versions differ somewhere along it, often past any cut)."""
    import textwrap

    lead = indent + text[: len(text) - len(text.lstrip())]
    return textwrap.wrap(text.strip(), width, initial_indent=lead, subsequent_indent=lead + "    ",
                         break_long_words=True, break_on_hyphens=False) or [indent]  # fmt: skip


def comparison(cmp: CompiledComparison) -> list[str]:
    """``harness compare`` of two compiled outputs: what changed from the base torch to the new one."""
    lines = [f"compiled entries: torch {cmp.base_torch} -> {cmp.new_torch}"]
    if not cmp.changes and not cmp.worse:
        lines.append("  no kernel added, removed or changed")
    for c in cmp.changes:
        lines.append(f"  {' '.join(c.key)}: {c.kernel} {c.kind}")
        lines += [part for d in c.detail for part in _wrapped(d, "    ")]
    lines += [f"  worse: {w}" for w in cmp.worse]
    lines += [f"  only in base (not compared): {k}" for k in cmp.only_in_base]
    lines += [f"  only in new: {k}" for k in cmp.only_in_new]
    lines += [f"  matched at another shape: {a} -> {b.split(' ')[2]}" for a, b in cmp.across_shapes]
    return lines


def html(page: Page) -> str:
    """compiled.html: the same as compiled.md, from a jinja2 template with autoescape (entry names, kernel names
    and Inductor's words are data, never markup)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("harness.render", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("compiled.html.j2").render(
        name=page.name, policies=list(page.policies.items()), found=[(a, answer(a)) for a in page.found],
        incomplete=INCOMPLETE if page.incomplete else "", left_out=list(page.left_out),
    )  # fmt: skip
