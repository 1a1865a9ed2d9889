"""Readable, filesystem-safe names for shapes, configs and artifact paths.

Everything that reaches a path comes through :func:`safe_component`, so nothing
written in a matrix can climb out of the output directory.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Mapping

_OPTION_ABBREV = {
    "num_warps": "w",
    "num_stages": "s",
    "num_ctas": "ctas",
    "maxnreg": "maxnreg",
    "waves_per_eu": "wpe",
    "matrix_instr_nonkdim": "nk",
    "kpack": "kp",
    "schedule_hint": "sched",
    "enable_fp_fusion": "fma",
}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def shape_id(shape: Mapping[str, Any]) -> str:
    """``M4096xN4096xK4096``; true flags are appended by name (``...xcausal``)."""
    dims = [f"{k}{v}" for k, v in shape.items() if not isinstance(v, bool)]
    flags = [k for k, v in shape.items() if isinstance(v, bool) and v]
    return "x".join(dims + flags)


def option_abbreviations() -> dict[str, str]:
    """Compile option -> the short name config ids use for it (``num_stages`` -> ``s``): what a legend decodes."""
    return dict(_OPTION_ABBREV)


def _short(key: str) -> str:
    if key in _OPTION_ABBREV:
        return _OPTION_ABBREV[key]
    return key.removeprefix("BLOCK_") if key.startswith("BLOCK_") else key


def config_id(config: Mapping[str, Any]) -> str:
    """``M128_N256_K64_GROUP_M8_w8_s3``: tunables first, then options, in the config's order."""
    parts = []
    for key, value in config.items():
        if isinstance(value, bool):
            value = int(value)
        parts.append(f"{_short(key)}{value}")
    return "_".join(parts) or "default"


def config_key(config: Mapping[str, Any]) -> str:
    """Order-independent identity of a config, for merging and joining records."""
    return json.dumps(dict(sorted(config.items())), sort_keys=True)


def safe_component(text: str, max_len: int = 80) -> str:
    cleaned = _UNSAFE.sub("_", str(text)).lstrip(".") or "_"
    if len(cleaned) > max_len or cleaned != str(text):
        digest = hashlib.sha256(str(text).encode()).hexdigest()[:8]
        cleaned = f"{cleaned[: max_len - 9]}-{digest}"
    return cleaned


def contained_path(root: Path, *parts: str) -> Path:
    """``root/part/...`` with every part sanitised; raises if it would leave ``root``."""
    path = root.joinpath(*(safe_component(p) for p in parts))
    resolved_root = root.resolve()
    if not path.resolve().is_relative_to(resolved_root):
        raise ValueError(f"artifact path {path} escapes {root}")
    return path
