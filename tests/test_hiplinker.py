"""Which ld.lld triton < 3.5 gets for AMD builds (the real link with triton 3.4.0 + ziglang is in README)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.compiling import hiplinker


def _fake_lld(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho 'LLD {version} (compatible with GNU linkers)'\n")
    path.chmod(0o755)
    return path


@pytest.fixture()
def bare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A machine where Triton finds no linker of its own and ziglang is not installed."""
    monkeypatch.setenv("TRITON_HIP_LLD_PATH", "")  # recorded, so whatever provide() sets is undone after the test
    monkeypatch.delenv("TRITON_HIP_LLD_PATH")
    monkeypatch.setattr(hiplinker, "_tritons_own", lambda: [tmp_path / "rocm" / "ld.lld"])
    monkeypatch.setattr(hiplinker, "SYSTEM_ROOTS", (tmp_path / "usr-lib",))
    monkeypatch.setattr(hiplinker, "_zig_wrapper", lambda tools: None)
    return tmp_path


def test_releases_that_link_in_process_need_nothing(bare: Path) -> None:
    assert hiplinker.provide("3.5.1", bare / "tools") == ("", "")
    assert hiplinker.provide("3.6.0", bare / "tools") == ("", "")


def test_a_recent_versioned_llvm_is_chosen_and_exported(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_lld(bare / "usr-lib" / "llvm-14" / "bin" / "ld.lld", "14.0.6")
    new = _fake_lld(bare / "usr-lib" / "llvm-19" / "bin" / "ld.lld", "19.1.7")
    path, note = hiplinker.provide("3.4.0", bare / "tools")
    assert path == str(new) and os.environ["TRITON_HIP_LLD_PATH"] == str(new) and "llvm-19" in note


def test_nothing_usable_is_a_warning_naming_what_was_tried(bare: Path) -> None:
    path, note = hiplinker.provide("3.4.0", bare / "tools")
    assert path == "" and note.startswith("warning:") and "TRITON_HIP_LLD_PATH" in note
    assert str(bare / "rocm" / "ld.lld") in note and "ziglang" in note and "lld-19" in note
    assert "TRITON_HIP_LLD_PATH" not in os.environ


def test_the_users_choice_is_kept(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = _fake_lld(bare / "mine" / "ld.lld", "20.1.0")
    monkeypatch.setenv("TRITON_HIP_LLD_PATH", str(mine))
    assert hiplinker.provide("3.4.0", bare / "tools")[0] == str(mine)
    monkeypatch.setenv("TRITON_HIP_LLD_PATH", str(bare / "missing"))
    path, note = hiplinker.provide("3.4.0", bare / "tools")
    assert path == "" and note.startswith("warning:") and "is not a file" in note
