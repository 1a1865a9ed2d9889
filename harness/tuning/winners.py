"""What the GPU phase remembers between cases and runs: one lock per GPU (no two timings share a device, whatever
the number of pytest workers), tuned winners cached per (kernel, dtype, shape, target model, Triton, kernel source)
with the context they were chosen under, and the winners a stored run holds (``--winners-from``)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from harness.matrix.cases import Case
from harness.model.ids import config_key
from harness.model.records import Record
from harness.model.runtime import GpuSlot
from harness.model.targets import Target
from harness.support.cache import cache_dir

#: what a cached winner was chosen under (:func:`tuning_context`), stored beside it
CONTEXT_KEYS = ("config_space", "torch", "driver", "device_model")


@dataclass(frozen=True)
class Winner:
    """A tuned winner as the host's winner cache keeps it: its config and median, the device it won on, each config
    space's best (re-timed with it, so the portability column survives reuse) and the context it was chosen under."""

    config: Mapping[str, Any]  # the kernel's own tunables and Triton's options
    median_us: float
    arch: str
    device: str
    space_best: Mapping[str, Mapping[str, Any]]
    context: Mapping[str, str]

    def to_json(self) -> dict[str, object]:
        return {
            "config": dict(self.config),
            "median_us": self.median_us,
            "arch": self.arch,
            "device": self.device,
            "space_best": {k: dict(v) for k, v in self.space_best.items()},
            **self.context,
        }

    @classmethod
    def from_json(cls, raw: object) -> Winner | None:
        """The entry as a cache file holds it; None for one that is not (damaged, or another layout's)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("config"), dict):
            return None
        best = raw.get("space_best") or {}
        return cls(
            config=raw["config"],
            median_us=float(raw.get("median_us") or 0.0),
            arch=str(raw.get("arch", "")),
            device=str(raw.get("device", "")),
            space_best={str(k): v for k, v in best.items() if isinstance(v, dict)} if isinstance(best, dict) else {},
            context={k: str(raw[k]) for k in CONTEXT_KEYS if k in raw},
        )


@dataclass(frozen=True)
class KnownWinner:
    """Another target's winner, as a stored run the user named holds it (``--winners-from``)."""

    config: Mapping[str, Any]
    source: str = "stored run"


@contextmanager
def gpu_lock(gpu: GpuSlot) -> Iterator[None]:
    name = (gpu.uuid or gpu.index or "0").replace("/", "_")
    path = Path(os.environ.get("HARNESS_LOCK_DIR", "/tmp")) / f"triton-harness-gpu-{name}.lock"
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def winner_key(kernel: str, dtype: str, shape: Mapping[str, int], target: Target, triton: str, kernel_hash: str) -> str:
    """Winners belong to a model (the target: h100 and h200 share sm_90 but not their best configs)."""
    raw = json.dumps([kernel, dtype, sorted(shape.items()), target.name, target.arch, triton, kernel_hash])
    return hashlib.sha256(raw.encode()).hexdigest()


def load_winner(key: str) -> Winner | None:
    path = cache_dir() / "winners" / f"{key}.json"
    try:
        found = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return Winner.from_json(found)  # a damaged entry is a miss: the case tunes again


def save_winner(key: str, entry: Winner) -> None:
    path = cache_dir() / "winners" / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # unique per thread as well
    tmp.write_text(json.dumps(entry.to_json()))
    tmp.replace(path)


def tuning_context(records: list[Record], gpu: GpuSlot) -> dict[str, str]:
    """What a cached winner was chosen under: the config space (every build the case compiled, hashed), torch,
    the GPU driver and the device model (Triton and the kernel source are in its key). A winner is reused only
    when all are the same (a config added to the space is then tried without ``--retune``)."""
    from importlib import metadata

    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = ""
    space = hashlib.sha256(json.dumps(sorted(config_key(r.config) for r in records)).encode()).hexdigest()[:16]
    return {
        "config_space": space,
        "torch": torch_version,
        "driver": gpu.driver or "",
        "device_model": gpu.name or "",
    }


StoredWinners = dict[tuple[str, str, str, str], KnownWinner]  # by (kernel, dtype, shape id, target)


def stored_winners(records: list[Record]) -> StoredWinners:
    """The tuned winners a stored run holds, by (kernel, dtype, shape, target): what ``--winners-from`` names."""
    return {
        (r.kernel, r.dtype, r.shape_id, r.target): KnownWinner(r.config)
        for r in records
        if r.mode == "tune" and r.status == "ok" and r.config
    }


def known_winners(case: Case, other_targets: list[str], stored: StoredWinners) -> dict[str, KnownWinner | None]:
    """Each other target's winner as a stored run the user named holds it (``--winners-from``), or None: never
    what this host's winner cache happens to hold from earlier runs (that would make the portability column
    depend on which cases ran before)."""
    from harness.model.ids import shape_id

    return {name: stored.get((case.kernel, case.dtype, shape_id(case.shape), name)) for name in other_targets}
