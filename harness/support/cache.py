"""The harness's own cache folder (``HARNESS_CACHE_DIR``): figures derived from artifacts, callback checks passed,
tuning winners, tools fetched. Everything in it is keyed by content, so deleting it costs time, never a result."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``HARNESS_CACHE_DIR``, else ``~/.cache/triton-portability-harness``."""
    root = os.environ.get("HARNESS_CACHE_DIR") or Path.home() / ".cache" / "triton-portability-harness"
    return Path(root)


def reuse_enabled() -> bool:
    """Whether kept results may be reused (``HARNESS_RESULT_CACHE``; ``harness run --no-reuse`` sets it to 0)."""
    return os.environ.get("HARNESS_RESULT_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")
