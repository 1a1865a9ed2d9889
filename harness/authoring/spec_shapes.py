"""The part of a kernel spec that is plain data about shapes, configs and dtypes, apart so that the matrix
reader's facts of a spec (:class:`harness.intake.facts.SpecFacts`) answer exactly as the spec does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class SpecShapes:
    """What a spec's plain fields say about shapes, configs and dtypes: shared by :class:`KernelSpec` and the facts
    the matrix reader gets of one from a child (:class:`harness.intake.facts.SpecFacts`), which have the same
    fields."""

    dims: tuple[str, ...]
    flags: tuple[str, ...]
    tunables: tuple[str, ...]
    interpret_dtypes: tuple[str, ...] | None

    def interpretable(self, dtype: str) -> bool:
        return self.interpret_dtypes is None or dtype in self.interpret_dtypes

    def split_config(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Split a config into (constexpr meta-parameters, compile options)."""
        meta = {k: v for k, v in config.items() if k in self.tunables}
        options = {k: v for k, v in config.items() if k not in self.tunables}
        return meta, options

    def normalize_shape(self, shape: Mapping[str, Any]) -> dict[str, Any]:
        """Shape with every flag present (missing flags are False)."""
        out: dict[str, Any] = {d: int(shape[d]) for d in self.dims}
        for f in self.flags:
            out[f] = bool(shape.get(f, False))
        return out
