"""Where a captured library already adapts to the vendor: per captured kernel, dtype and shape, the launches each
target's face got (:mod:`harness.intake.virtual_device.face`), and whether they differ between targets.

So a reader can tell "the library's AMD launch fits" from "the CUDA launch would not fit on AMD": a verdict on a
captured op is about the launches that vendor gets, and this says when those are not the other vendor's. Under
``launches_from`` (the cross-vendor question, asked on purpose) every target built one target's launches: that is
said instead. Decides nothing: the renderers print these lines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.model.ids import shape_id
from harness.model.records import Record

#: the launch options summarised per target, in this order
_OPTIONS = ("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


@dataclass(frozen=True)
class Launches:
    """One captured kernel at one dtype and shape: per target, the face it was captured under and its configs."""

    kernel: str
    dtype: str
    shape: str
    per_target: tuple[tuple[str, str, tuple[str, ...]], ...]  # (target, face, sorted config JSON)
    #: the arguments whose type or constexpr value the library chose differently per target: (name, per target)
    arguments: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def adapts(self) -> bool:
        """The library launched something else on some target (each target captured under its own face)."""
        return self.own_faces and (len({configs for _, _, configs in self.per_target}) > 1 or bool(self.arguments))

    @property
    def own_faces(self) -> bool:
        return all(target == face for target, face, _ in self.per_target)

    def short(self) -> str:
        """One terminal line: what differs, not every target's list (report.md has those)."""
        where = f"{self.kernel} {self.dtype} {self.shape}: "
        if not self.own_faces:
            return where + "one target's launches built for every target (launches_from)"
        what = (["configs"] if len({c for _, _, c in self.per_target}) > 1 else []) + [n for n, _ in self.arguments]
        return (
            where
            + f"the library adapts ({', '.join(what)} differ between {', '.join(t for t, _, _ in self.per_target)})"
        )

    def line(self) -> str:
        parts = [f"{target} {_summary(configs)}" for target, _, configs in self.per_target]
        where = f"{self.kernel} {self.dtype} {self.shape}: "
        if not self.own_faces:
            faces = sorted({face for _, face, _ in self.per_target})
            return where + f"{', '.join(faces)}'s launches built for every target (launches_from): " + ", ".join(parts)
        args = [f"{name} {'/'.join(values)}" for name, values in self.arguments]
        tail = " — the library adapts" if self.adapts else " — the same on every target"
        return where + ", ".join(parts) + (f"; {', '.join(args)}" if args else "") + tail


def _summary(configs: tuple[str, ...]) -> str:
    """``6 configs, num_warps 1-32`` or ``num_warps 16`` (an untuned launch)."""
    dicts = [json.loads(c) for c in configs]
    bits = []
    for option in _OPTIONS:
        values = sorted({d[option] for d in dicts if option in d})
        if values:
            bits.append(f"{option} {values[0]}" + (f"-{values[-1]}" if len(values) > 1 else ""))
    head = f"{len(dicts)} configs" if len(dicts) > 1 else ""
    text = ", ".join(b for b in [head, *bits] if b)
    return text or "Triton's defaults"


def of(records: Sequence[Record]) -> list[Launches]:
    """The captured kernels' launches per target, for every (kernel, dtype, shape) built on two targets or more."""
    seen: dict[tuple[str, str, str], dict[str, tuple[str, set[str], dict[str, set[str]]]]] = {}
    for r in records:
        if r.mode != "compile" or not r.captured or not r.captured.face or r.environment != r.deciding_environment:
            continue
        key = (r.kernel, r.dtype, shape_id(dict(r.shape)))
        face, configs, args = seen.setdefault(key, {}).setdefault(r.target, (r.captured.face, set(), {}))
        configs.add(json.dumps(_plain(r.config), sort_keys=True))
        tuned = set(_plain(r.config))
        for name, seen_as in (r.specialisation or {}).items():
            if name not in tuned:  # a constexpr's value, else the type the launcher gave the argument
                told = seen_as.value if seen_as.type == "constexpr" else seen_as.type
                args.setdefault(name, set()).add(str(told))
    out = []
    for (kernel, dtype, shape), by_target in sorted(seen.items()):
        if len(by_target) < 2:
            continue
        per = tuple((t, face, tuple(sorted(c))) for t, (face, c, _) in sorted(by_target.items()))
        names = sorted({n for _, _, a in by_target.values() for n in a})
        differ = []
        for name in names:
            values = tuple("|".join(sorted(by_target[t][2].get(name, {"-"}))) for t in sorted(by_target))
            if len(set(values)) > 1:
                differ.append((name, values))
        out.append(Launches(kernel, dtype, shape, per, tuple(differ)))
    return out


def _plain(config: Any) -> dict[str, Any]:
    return dict(config) if config else {}
