"""A case's kernel reference, decoded once into its kind (a spec file or module, an op's kernel, Inductor's kernel):
each kind's text form round-trips, text no harness writes is one clear error, and no other module tells the kinds
apart by their text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import REPO

from harness.model.kernel_refs import FileRef, InductorRef, OpRef, Slot, decode


def test_each_kind_round_trips_through_its_text() -> None:
    op = OpRef("lib.py:op", "lib.py:inputs", "", "k", (("N", 4096),), "fp16", 2)
    slot = Slot(
        "mi300x", '[["N", 8]]', "bf16", "ab" * 32, 1, ("k", "k2"), "pointwise", (('{"XBLOCK": 8}', (1, 1, 1)),), 14
    )
    made = InductorRef("e", "m.py:f", "m.py:i", False, (("max_autotune", True),), "k", "max-autotune", "2.13.0",
                       ("XBLOCK",), (slot,), True)  # fmt: skip
    for ref in (op, made):
        assert decode(ref.encode()) == ref
    assert decode("/abs/kernels/matmul.py:SPEC") == FileRef("/abs/kernels/matmul.py", "SPEC")
    assert decode("pkg.kernels.rms:SPEC").is_path is False and decode("/a/b.py:S").is_path  # type: ignore[union-attr]


def test_text_no_harness_writes_is_one_line_naming_it() -> None:
    with pytest.raises(ValueError) as bad:
        decode('inductor|["only", "two"]')
    assert "not a kernel reference this harness writes" in str(bad.value) and "\n" not in str(bad.value)


def test_no_other_module_tells_the_kinds_apart_by_their_text() -> None:
    prefixes = re.compile(r"""["'](op|inductor)\|""")
    found = [
        str(p.relative_to(REPO))
        for p in sorted((REPO / "harness").rglob("*.py"))
        if prefixes.search(p.read_text()) and p != REPO / "harness" / "model" / "kernel_refs.py"
    ]
    assert found == [], found
    assert Path(REPO / "harness" / "model" / "kernel_refs.py").is_file()
