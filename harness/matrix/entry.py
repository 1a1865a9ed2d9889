"""A matrix's kernel entry as the later stages take it, whichever section made it: a ``kernels:`` item (a spec, or
one launch of an ``op:``), or one kernel TorchInductor generated for a ``compiled:`` entry or an op's regions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.matrix.configs import ConfigEntry
from harness.model.environments import Environment


def shape_key(shape: Any) -> str:
    """A shape as the captures key it: its fields sorted, as JSON."""
    return json.dumps(sorted(dict(shape).items()))


@dataclass(frozen=True)
class KernelEntry:
    name: str
    ref: str
    dtypes: tuple[str, ...]
    shapes: tuple[tuple[tuple[str, Any], ...], ...]
    configs: tuple[ConfigEntry, ...]
    interpret: tuple[tuple[tuple[str, Any], ...], ...]
    timeout_s: float
    compare_threshold: float | None = None  # harness compare's threshold for this kernel's timings
    import_env: tuple[tuple[str, str], ...] = ()  # set in every process before the kernel's module is imported
    #: a captured op's launches: (face target, shape JSON, dtype) -> configs (harness.matrix.ops_entries)
    launched: tuple[tuple[tuple[str, str, str], tuple[ConfigEntry, ...]], ...] = ()
    launches_from: str | None = None  # every target builds this target's launches (the cross-vendor question)
    #: per target, this kernel's compile environments where they are not the matrix's (harness.matrix.reading)
    environments: tuple[tuple[str, tuple[Environment, ...]], ...] = ()

    def launched_configs(self, target: str, shape: Any, dtype: str) -> tuple[ConfigEntry, ...] | None:
        """The configs a captured op launches as on ``target`` (or on ``launches_from``); None for a spec."""
        if not self.launched:
            return None
        face = self.launches_from or target
        wanted = (face, shape_key(shape), dtype)
        return next((configs for key, configs in self.launched if key == wanted), ())

    def face_env(self, target: str) -> tuple[tuple[str, str], ...]:
        """``import_env`` with the face a captured op's processes wear for ``target``'s builds."""
        if not self.launched:
            return self.import_env
        from harness.intake.virtual_device.face import ENV

        return tuple(sorted(dict(self.import_env, **{ENV: self.launches_from or target}).items()))
