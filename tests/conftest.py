"""Fixtures shared by the CPU tests (helpers live in helpers.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The harness's result cache (harness.execution.result_cache) would let one test's builds answer another's: every
# test runs its jobs unless it turns the cache on itself (tests/test_result_cache.py, the smoke matrix's warm run).
os.environ["HARNESS_RESULT_CACHE"] = "0"


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh harness cache, so resource figures are really re-derived from the tools."""
    cache = tmp_path / "harness-cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    return cache
