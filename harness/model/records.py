"""Results: one record per (kernel, dtype, shape, target, config), and the run they came from.

``results.json`` carries a schema version, the run's provenance and the records.
Records are appended to ``records.jsonl`` the moment they exist and
``results.json`` is rewritten atomically at most once a second and at the end;
a run killed half-way keeps every finished record (``harness report`` reads the
JSONL when it holds more records than the JSON). Merging several runs keys records by
:meth:`Record.key` plus the host they ran on.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.model.build_facts import BuildFigures
from harness.model.ids import config_key, shape_id
from harness.model.payloads import Payload, read_field, shapes, to_json_value
from harness.model.runtime import InterpretCorrectness, Runtime
from harness.model.vocabulary import Mode, Status

#: 2: AMD registers are the compiler's unified total, ``spill_bytes`` / ``occupancy_frac`` added, the
#: launch specialisation and the verdicts stored. 3: ``deciding_environment`` and ``incomplete`` verdicts, the
#: run's ``selected`` builds, ``duplicate_of`` by binary, sm_90's 1 KiB reserve as ``reserved_shared`` (no longer
#: in ``static_shared``), ``spill_bytes`` null where no log of the binary could be had, ``runtime.model`` instead
#: of shares of a peak. Older files are read (their figures as they were).
SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)


@dataclass(frozen=True)
class Record(BuildFigures):
    """One build (``compile``), interpreter check (``interpret``) or a case's tuned winner (``tune``). Frozen: a
    later stage that adds to a record (the GPU phase's runtime, the plugin's case id) makes a new one. The build's
    figures are :class:`~harness.model.build_facts.BuildFigures` (keyword-only; JSON writes them after the record's
    own fields)."""

    kernel: str
    dtype: str
    shape: dict[str, Any]
    target: str
    arch: str
    vendor: str
    triton: str
    config: dict[str, Any]
    config_id: str
    meta: dict[str, Any]  # the config's constexpr tunables (what the interpreter sees)
    origin: str  # "nvidia" | "amd" | "matrix": which space the config came from
    mode: Mode  # one per case run on a GPU for "tune"
    status: Status
    error: str = ""
    traceback: str = ""  # where an error came from: the worker's traceback and compiler output
    host: str = ""
    correctness: InterpretCorrectness | None = None  # interpret records: the CPU interpreter's checks
    kernel_hash: str = ""
    runtime: Runtime | None = None  # what the GPU found (launched configs, the tune record)
    environment: str = "default"  # compile environment name (see harness/model/environments.py)
    deciding_environment: str = "default"  # the target's environment whose build decides its verdict
    env: dict[str, str] = field(default_factory=dict)  # the environment's variables
    duplicate_of: str = ""  # an earlier config of the case built into the same binary, launched alike
    case_id: str = ""  # the pytest item that produced it (what --resume skips)
    case_records: int = 0  # how many records that item produced: a resume trusts only complete cases
    expected_failure: str = ""  # the matrix's known-failure reason that covers this failed build
    known_failure_fixed: str = ""  # a known failure's reason that covers this build, which now passes
    import_env: dict[str, str] = field(default_factory=dict)  # variables set before the kernel's module was imported

    @property
    def column(self) -> str:
        """Target plus environment: ``mi300x`` or ``mi300x@async-copy``."""
        return self.target if self.environment == "default" else f"{self.target}@{self.environment}"

    @property
    def shape_id(self) -> str:
        return shape_id(self.shape)

    def key(self) -> tuple[str, ...]:
        """The merge key: what was compiled, for which target, with which Triton."""
        return (
            self.kernel,
            self.dtype,
            json.dumps(self.shape, sort_keys=True),
            self.target,
            self.environment,
            config_key(self.config),
            self.triton,
            self.mode,
        )

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON holds it (the payloads as their ``to_json``), a copy: the record's own fields, then the
        build's figures (what identifies a record comes first in a line of ``records.jsonl``)."""
        return {name: to_json_value(getattr(self, name)) for name in _JSON_ORDER}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], strict: bool = False) -> Record:
        """A record from its JSON (``results.json``, ``records.jsonl``): unknown keys dropped, so a file an older or
        newer harness wrote still reads. ``strict`` (a record built in this process from a worker's reply): an
        unknown key is a ValueError naming it, never a field silently lost."""
        known = shapes(cls)
        if strict and (unknown := sorted(set(data) - set(known))):
            raise ValueError(f"record fields this harness does not know: {', '.join(unknown)}")
        return cls(**{k: read_field(known[k], v) for k, v in data.items() if k in known})

    @classmethod
    def built(cls, case: Mapping[str, Any], reply: Payload, leave: tuple[str, ...] = ()) -> Record:
        """A record from its case's fields and a worker's typed reply (fresh, or the result cache's read back), field
        by field, no JSON between: each of the reply's keys but ``leave`` is the record's field of that name, the
        reply's objects kept (a build's figures are declared once, :class:`BuildFigures`, so each is held alike on
        both sides); a key the record does not have is a ValueError naming it, never a figure silently lost."""
        known = shapes(cls)
        keys = [k for k in reply.keys() if k not in leave]
        if unknown := sorted(set(keys) - set(known)):
            raise ValueError(f"record fields this harness does not know: {', '.join(unknown)}")
        # a key the reply's class does not have is JSON (an older cache entry's): read as the record reads JSON
        figures = {k: read_field(known[k], reply.extra[k]) if k in reply.extra else getattr(reply, k) for k in keys}
        return cls(**{**case, **figures})


_FIGURES = tuple(f.name for f in dataclasses.fields(BuildFigures))
_JSON_ORDER = tuple(f.name for f in dataclasses.fields(Record) if f.name not in _FIGURES) + _FIGURES


BINARY_KINDS = ("cubin", "hsaco")


def launch_identity(r: Record) -> tuple[Any, ...] | None:
    """What the GPU would run for a build: the binary (sha256) and the launch parameters Triton passes with it
    (warps, dynamic shared bytes, CTAs per cluster, grid). None for a build without a binary."""
    kind = next((k for k in BINARY_KINDS if k in r.artifacts), None)
    if r.status != "ok" or kind is None or not r.artifacts[kind].sha256:
        return None
    res = r.resources
    return (
        kind,
        r.artifacts[kind].sha256,
        res.num_warps,
        res.shared,
        1 if res.num_ctas is None else res.num_ctas,
        json.dumps(None if res.grid is None else list(res.grid)),
    )


def mark_duplicates(records: list[Record]) -> list[Record]:
    """Builds of one case and target that are one binary launched the same way point at the first of them.

    Options that change nothing (``num_stages`` on a kernel without a loop, an AMD option on NVIDIA, gfx950
    rewriting kpack 2 to 1) give another cache key but the same bytes: such a build is one config, launched
    and timed once (the GPU phase skips it) and counted once in every fit count. Returns the records again, a new
    one for each duplicate; the records given are not changed.
    """
    first: dict[tuple[Any, ...], str] = {}
    out = []
    for r in records:
        ident = launch_identity(r)
        key = None if ident is None else (r.target, r.environment, *ident)
        if key is not None and key in first:
            out.append(dataclasses.replace(r, duplicate_of=first[key]))
        else:
            if key is not None:
                first[key] = r.config_id
            out.append(r)
    return out
