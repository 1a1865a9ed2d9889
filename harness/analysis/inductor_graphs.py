"""Where TorchInductor adapts to the vendor: per compiled entry, shape and dtype, each target's kernel graph (the
kernels the compiled wrapper launches, in order, and the configs Inductor's heuristics list for each), what differs
between the targets, and the findings of the builds (configs over a limit, spills, failed compiles).

Works on a run's records (a ``compiled:`` section of a run matrix, or ``harness compiled``, which is such a run:
:func:`of_records`); decides nothing about rendering.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Mapping

from harness.analysis import gate
from harness.analysis.gate import FindingCounts
from harness.analysis.rows import build_rows
from harness.model.ids import config_id
from harness.model.records import Record


@dataclass(frozen=True)
class Graph:
    """One target's kernel graph for one entry, shape and dtype: (kernel, heuristic, configs) in launch order."""

    target: str
    kernels: tuple[tuple[str, str, int], ...]
    choices: int  # template choices max-autotune listed (0 without it)
    #: per kernel, each config's settings as (name, value) pairs: what the named differences compare
    settings: tuple[tuple[str, tuple[tuple[tuple[str, str], ...], ...]], ...] = ()
    #: its configs by their check in the graph against eager, the GPU's where the target's GPU ran it, else the
    #: interpreter's on the host: (passed, failed, not checked)
    checked: tuple[int, int, int] = (0, 0, 0)
    #: per kernel, the sizes the wrapper launched it with (``xnumel``, ``r0_numel``): where a split differs
    numels: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    on_gpu: int = 0  # of ``checked``'s passed and failed, how many the GPU decided
    attention: tuple[str, ...] = ()  # the SDPA backends the graph ran on this target (cudnn, flash, ...)
    conv_layout: tuple[str, ...] = ()  # its convolutions' output layouts on this target
    counts: FindingCounts | None = None  # this target's configs by finding kind


@dataclass(frozen=True)
class Adaptation:
    """One entry at one shape and dtype across targets: each graph, the differences in words, the findings."""

    entry: str
    shape: str
    dtype: str
    graphs: tuple[Graph, ...]
    differences: tuple[str, ...]
    findings: tuple[str, ...]
    counts: FindingCounts | None = None  # its configs by finding kind, counted as the run's last line counts them
    unchecked: tuple[tuple[str, int], ...] = ()  # why its configs went unchecked, with how many (gate.unchecked)


def of_records(records: Iterable[Record]) -> list[Adaptation]:
    """From a run's records (or a merge's): one :class:`Adaptation` per compiled entry, shape, dtype, Triton and
    torch version (hosts that ran other torch releases are never mixed into one graph), each target's graph as its
    records say (under Triton's defaults; configs counted per kernel as Inductor listed them)."""
    Key = tuple[str, str, str, str, str]
    graphs: dict[Key, dict[str, tuple[str, ...]]] = {}
    choices: dict[tuple[str, ...], int] = {}
    kernels: dict[tuple[str, ...], dict[str, tuple[str, int]]] = {}
    settings: dict[tuple[str, ...], dict[str, list[tuple[tuple[str, str], ...]]]] = {}
    findings: dict[Key, list[str]] = {}
    checked: dict[tuple[str, ...], list[int]] = {}
    numels: dict[tuple[str, ...], dict[str, tuple[tuple[str, int], ...]]] = {}
    grouped: dict[Key, list[Record]] = {}
    decided: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for r in records:
        if r.inductor.entry is None or r.mode != "compile" or r.environment != "default":
            continue
        key = (r.inductor.entry, r.shape_id, r.dtype, r.triton, str(r.inductor.torch or ""))
        grouped.setdefault(key, []).append(r)
        graphs.setdefault(key, {}).setdefault(r.target, tuple(r.inductor.graph or ()))
        choices.setdefault(key + (r.target,), int(r.inductor.choices or 0))
        name = r.inductor.kernel or r.kernel
        per = kernels.setdefault(key + (r.target,), {})
        heuristic, seen = per.get(name, (r.inductor.heuristic or "?", 0))
        per[name] = (heuristic, seen + 1)
        numels.setdefault(key + (r.target,), {}).setdefault(name, tuple(sorted((r.inductor.numels or {}).items())))
        decided.setdefault(key + (r.target,), (tuple(r.inductor.attention or ()), tuple(r.inductor.conv_layout or ())))
        pairs = tuple(sorted((k, str(v)) for k, v in r.config.items()))
        settings.setdefault(key + (r.target,), {}).setdefault(name, []).append(pairs)
        where = f"{r.target} {name} {config_id(r.config)}"
        tally = checked.setdefault(key + (r.target,), [0, 0, 0, 0])
        check, ran = r.correctness, r.runtime
        if ran is not None and ran.status in ("ok", "mismatch"):  # the GPU's check decides where it ran
            tally[0 if ran.status == "ok" else 1] += 1
            tally[3] += 1
            if ran.status == "mismatch":
                findings.setdefault(key, []).append(f"{where}: mismatch on the GPU against eager")
        elif check is not None and check.failed:
            tally[1] += 1
            said = " ".join((check.failed[0].error or check.failed[0].status or "").split())[:200]
            findings.setdefault(key, []).append(f"{where}: interpreter {check.failed[0].status}: {said}")
        elif check is not None and check.checks and not check.unchecked:
            tally[0] += 1
        else:
            tally[2] += 1
        if r.status != "ok":
            said = " ".join((r.error or "").split())[:200]
            findings.setdefault(key, []).append(f"{where}: compile {r.status}: {said}")
        for flag in r.flags:
            said = f"{flag.resource} {flag.value:g} against a limit of {flag.limit:g} ({flag.severity})"
            findings.setdefault(key, []).append(f"{where}: {said}")
    out = []
    versions = {k[3:] for k in graphs}
    for key in sorted(graphs):
        entry, shape, dtype, triton, torch = key
        made = tuple(
            Graph(
                target,
                tuple(_kernel(n, kernels[key + (target,)]) for n in graph),
                choices[key + (target,)],
                tuple((n, tuple(c)) for n, c in settings.get(key + (target,), {}).items()),
                tuple(checked.get(key + (target,), (0, 0, 0, 0))[:3]),  # type: ignore[arg-type]
                tuple(numels.get(key + (target,), {}).items()),
                checked.get(key + (target,), (0, 0, 0, 0))[3],
                *decided.get(key + (target,), ((), ())),
                gate.count(build_rows([r for r in grouped[key] if r.target == target])),
            )
            for target, graph in sorted(graphs[key].items())
        )
        label = shape if len(versions) == 1 else f"{shape} triton{triton} torch{torch}"
        rows = build_rows(grouped[key])
        out.append(
            Adaptation(
                entry,
                label,
                dtype,
                made,
                tuple(_differences(made)),
                tuple(findings.get(key, ())),
                gate.count(rows),
                gate.unchecked(rows),
            )  # fmt: skip
        )
    return out


def _differences(graphs: tuple[Graph, ...]) -> list[str]:
    if len(graphs) < 2:
        return []
    said = []
    counts = {g.target: len(g.kernels) for g in graphs}
    if len(set(counts.values())) > 1:
        said.append("kernels: " + ", ".join(f"{t} {n}" for t, n in counts.items()))
    names = {g.target: [k[0] for k in g.kernels] for g in graphs}
    everywhere = set.intersection(*(set(v) for v in names.values()))
    for target, mine in names.items():
        alone = [n for n in mine if n not in everywhere]
        if alone:
            said.append(f"only on {target}: {', '.join(alone)}")
    first = graphs[0]
    for g in graphs[1:]:
        for (name, _, n), (other, _, m) in zip(first.kernels, g.kernels):
            if name == other and n != m:
                said.append(f"{name}: configs {first.target} {n}, {g.target} {m}")
    said += _sizes_differ(graphs, [n for n in names[first.target] if n in everywhere])
    said += _settings_differ(graphs, [n for n in names[first.target] if n in everywhere])
    decided = (("attention", {g.target: g.attention for g in graphs}),
               ("convolution output", {g.target: g.conv_layout for g in graphs}))  # fmt: skip
    for what, seen in decided:
        if len(set(seen.values())) > 1:
            said.append(f"{what}: " + "; ".join(f"{t} {', '.join(LAYOUT.get(v, v) for v in vs) or 'none'}"
                                                for t, vs in seen.items()))  # fmt: skip
    choices = {g.target: g.choices for g in graphs}
    if len(set(choices.values())) > 1:
        said.append("max-autotune choices: " + ", ".join(f"{t} {n}" for t, n in choices.items()))
    return said


#: the config settings named when they differ between targets, in this order: warps, stages, the block sizes (any
#: ``*BLOCK``), then the options only one backend has (HIP's waves per EU, MFMA shape, kpack; NVIDIA's maxnreg)
_NAMED = ("num_warps", "num_stages")
_BACKEND_ONLY = ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "maxnreg", "num_ctas")


def _settings_differ(graphs: tuple[Graph, ...], kernels: list[str]) -> list[str]:
    """Per kernel on every target: each setting whose values differ between the targets' configs, named with each
    target's values (``num_warps h100 4, 8; mi300x 4``); a setting one target's configs have and another's lack."""
    said = []
    per_target = {g.target: dict(g.settings) for g in graphs}
    for name in kernels:
        values: dict[str, dict[str, set[str]]] = {}
        for target, kernels_of in per_target.items():
            for config in kernels_of.get(name, ()):
                for setting, value in config:
                    values.setdefault(setting, {}).setdefault(target, set()).add(value)
        order = [*_NAMED, *sorted(s for s in values if s.endswith("BLOCK")), *_BACKEND_ONLY]
        for setting in (s for s in order if s in values):
            seen = {t: values[setting].get(t, set()) for t in per_target}
            if len({frozenset(v) for v in seen.values()}) > 1:
                said.append(f"{name}: {_setting_said(setting, seen)}")
    return said


#: a convolution output's layout in words
LAYOUT = {"contiguous": "NCHW (contiguous)", "channels_last": "NHWC (channels-last)",
          "channels_last_3d": "NDHWC (channels-last 3-D)"}  # fmt: skip


def _setting_said(setting: str, seen: Mapping[str, set[str]]) -> str:
    """A setting's values per target in the user's terms: warps with the threads they make at each target's wave
    width (16 warps of 32 and 8 of 64 are both 512 threads), an option one backend alone has named as its."""
    if setting in _BACKEND_ONLY:
        having = {t: v for t, v in seen.items() if v}
        shown = "; ".join(f"{t} {', '.join(sorted(v, key=_number))}" for t, v in having.items())
        return f"{setting} ({'/'.join(having)} only) {shown}"
    if setting == "num_warps":
        from harness.model.targets import catalogue

        widths = {t: catalogue()[t].warp_size if t in catalogue() else 0 for t in seen}
        parts = []
        for t, v in seen.items():
            warps = sorted(v, key=_number)
            threads = [str(int(w) * widths[t]) for w in warps if w.isdigit() and widths[t]]
            parts.append(f"{t} {', '.join(warps)}" + (f" ({', '.join(threads)} threads)" if threads else ""))
        return "num_warps " + "; ".join(parts)
    return f"{setting} " + "; ".join(f"{t} {', '.join(sorted(v, key=_number)) or 'none'}" for t, v in seen.items())


def _sizes_differ(graphs: tuple[Graph, ...], kernels: list[str]) -> list[str]:
    """Per kernel on every target: the sizes it was launched with, where they differ. Inductor splits a long
    reduction into partial sums by the device (its ``reduction_split_factor``: SM or CU count, warps per SM): the
    same kernel then runs over another number of parts (``xnumel``) of another length (``r0_numel``), and the
    kernel that combines them over that many parts. A reduction's differing sizes are named its split."""
    said = []
    per_target = {g.target: dict(g.numels) for g in graphs}
    heuristics = {k[0]: k[1] for g in graphs for k in g.kernels}
    for name in kernels:
        seen = {t: per.get(name, ()) for t, per in per_target.items()}
        if any(not v for v in seen.values()) or len(set(seen.values())) < 2:
            continue
        what = "split" if "reduction" in heuristics.get(name, "") else "sizes"
        shown = "; ".join(f"{t} " + ", ".join(f"{k} {v}" for k, v in sizes) for t, sizes in seen.items())
        said.append(f"{name}: {what} {shown}")
    return said


def _number(text: str) -> tuple[int, float | str]:
    try:
        return (0, float(text))
    except ValueError:
        return (1, text)


def _kernel(name: str, seen: Mapping[str, tuple[str, int]]) -> tuple[str, str, int]:
    # a kernel of the graph with no record here: a -k selection, a shard or a cut run left it out
    heuristic, configs = seen.get(name, ("not in these records", 0))
    return name, heuristic, configs


def policies_of(records: Iterable[Record]) -> tuple[str, ...]:
    """The named policies the compiled kernels' records say stood in for a GPU's timing (in their order)."""
    seen: dict[str, None] = {}
    for r in records:
        seen.update(dict.fromkeys(r.inductor.policies or ()))
    return tuple(seen)
