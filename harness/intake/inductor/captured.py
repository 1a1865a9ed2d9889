"""What a compiled capture found for one shape and dtype, typed: a graph of kernels, each with its configs, its
launches and each config's host check. Made once, where the capture child's JSON comes back
(:mod:`harness.intake.inductor.compiled_probe`, from the child or from the capture remembered on disk), and read as
fields after that (:mod:`harness.matrix.compiled_entries`); a table that lacks a field the harness reads is refused
there, in one line, never later as a ``KeyError``.

The JSON stays beside the fields (``json``), whole: Inductor's own metadata (``triton_meta``, ``inductor_meta``,
size hints) is read as Inductor wrote it by what rebuilds Inductor's decorator from it (a test's reference), and it is
what the capture remembers on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Union

from harness.authoring.spec import Config
from harness.model.runtime import Check

#: a JSON value as ``json.loads`` gives it
Json = Union[None, bool, int, float, str, list["Json"], dict[str, "Json"]]


@dataclass(frozen=True)
class Launch:
    """One launch of a kernel in the compiled wrapper's call: the grid each config would launch with (Inductor's
    configs, then its coordinate-descent candidates), and the sizes it was given (``xnumel``, ``r0_numel``...)."""

    grids: tuple[tuple[int, ...], ...]
    numels: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class CapturedKernel:
    """A Triton kernel the compiled wrapper launches: Inductor's module for it and what it lists."""

    name: str
    heuristic: str  # pointwise, reduction, persistent_reduction, template, ...
    source: str
    configs: tuple[Config, ...]  # Inductor's list
    coordesc: tuple[Config, ...]  # with coordinate_descent_tuning: its tuner's first candidates, after the list
    launches: tuple[Launch, ...]
    checks: tuple[Check, ...]  # per config of configs + coordesc, in order; fewer where the capture made fewer
    constexprs: tuple[str, ...]  # the kernel's constexpr parameters (its signature's): what its configs choose

    def check_of(self, index: int) -> Check | None:
        """The host check of config ``index`` (of configs + coordesc), None where the capture made none."""
        return self.checks[index] if index < len(self.checks) else None


@dataclass(frozen=True)
class CapturedGraph:
    """The kernels one shape and dtype's compiled call launches, in its order, and what the target decided around
    them."""

    kernels: tuple[CapturedKernel, ...]
    not_launched: tuple[str, ...]  # modules Inductor compiled that the wrapper never launches
    choices: tuple[tuple[str, ...], ...]  # per template selection (max-autotune), the choices' names
    attention: tuple[str, ...]  # the SDPA backends the graph's attention ran
    conv_layout: tuple[str, ...]  # its convolutions' output layouts
    json: Mapping[str, Json]  # the table as the capture child wrote it

    @classmethod
    def of(cls, table: Mapping[str, Json]) -> CapturedGraph:
        """The typed graph of a capture's JSON table; ValueError, in one line, for a table that is not one."""
        kernels = table.get("kernels")
        if not isinstance(kernels, list) or not all(isinstance(k, dict) for k in kernels):
            raise ValueError("a compiled capture's table has no kernel list")
        return cls(
            kernels=tuple(_kernel(k) for k in kernels if isinstance(k, dict)),
            not_launched=tuple(str(n) for n in _list(table.get("not_launched"))),
            choices=tuple(
                tuple(str(c.get("name")) for c in _list(s.get("choices")) if isinstance(c, dict))
                for s in _list(table.get("choices"))
                if isinstance(s, dict)
            ),
            attention=tuple(str(a) for a in _list(table.get("attention"))),
            conv_layout=tuple(str(c) for c in _list(table.get("conv_layout"))),
            json=table,
        )


def _list(value: Json) -> list[Json]:
    return value if isinstance(value, list) else []


def _kernel(k: dict[str, Json]) -> CapturedKernel:
    name = k.get("name")
    if not isinstance(name, str) or not isinstance(k.get("source"), str):
        raise ValueError(f"a compiled capture's kernel {name!r} has no name or source")
    meta = k.get("triton_meta")
    signature = meta.get("signature") if isinstance(meta, dict) else None
    launches = []
    for la in _list(k.get("launches")):
        if not isinstance(la, dict):
            continue
        grids = tuple(
            tuple(x for x in g if isinstance(x, int)) if isinstance(g, list) else () for g in _list(la.get("grids"))
        )
        args = la.get("args")
        numels = tuple(
            (str(n), v) for n, v in (args.items() if isinstance(args, dict) else ())
            if str(n).endswith("numel") and isinstance(v, int) and not isinstance(v, bool)
        )  # fmt: skip
        launches.append(Launch(grids, numels))
    return CapturedKernel(
        name=name,
        heuristic=str(k.get("heuristic")),
        source=str(k.get("source")),
        configs=tuple(dict(c) for c in _list(k.get("configs")) if isinstance(c, dict)),
        coordesc=tuple(dict(c) for c in _list(k.get("coordesc")) if isinstance(c, dict)),
        launches=tuple(launches),
        checks=tuple(Check.from_json(c) for c in _list(k.get("checks")) if isinstance(c, dict)),
        constexprs=tuple(
            sorted(str(n) for n, t in (signature.items() if isinstance(signature, dict) else ()) if t == "constexpr")
        ),
    )
