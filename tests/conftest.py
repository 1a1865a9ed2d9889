"""Fixtures shared by the CPU tests (helpers live in helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh harness cache, so resource figures are really re-derived from the tools."""
    cache = tmp_path / "harness-cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    return cache
