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


def test_a_kernel_inductor_numbered_otherwise_is_matched_by_its_place_in_the_graph() -> None:
    """The stored H100 run's compiled records (tests/data/compiled/run-torch211-h100) against the same records with
    every Inductor number moved on by 3, as a mode or a fusion earlier in the graph moves them: every record is
    matched, and the kernels read as renamed, not removed and added."""
    import dataclasses
    import re

    from helpers import DATA

    from harness.analysis.compare.inputs import index
    from harness.analysis.compiled_compare import compare, graphs_of
    from harness.model.kernel_refs import graph_identity
    from harness.results.store import load_results

    assert graph_identity(("triton_poi_fused_add_0", "triton_red_sum_1", "triton_poi_fused_add_2"), 3) == (
        "triton_poi_fused_add#2"
    )

    def moved(name: str) -> str:
        return re.sub(r"_(\d+)$", lambda m: f"_{int(m.group(1)) + 3}", name)

    _, base = load_results(DATA / "compiled" / "run-torch211-h100" / "results.json")
    renamed = []
    for r in base:
        if r.inductor.entry is None:
            renamed.append(r)
            continue
        inductor = dataclasses.replace(
            r.inductor, kernel=moved(r.inductor.kernel or ""), graph=tuple(moved(n) for n in r.inductor.graph or ())
        )
        kernel = f"{r.inductor.entry}.{moved(r.inductor.kernel or '')}"
        renamed.append(dataclasses.replace(r, kernel=kernel, inductor=inductor))
    assert {r.kernel for r in renamed} != {r.kernel for r in base}
    assert index(base, "compile").keys() == index(renamed, "compile").keys()  # every record matched
    cmp = compare(graphs_of(base, lambda r: ""), graphs_of(renamed, lambda r: ""))
    assert cmp.changes and all(c.kind == "changed" and c.detail[0].startswith("named ") for c in cmp.changes)
    assert not cmp.worse and not cmp.only_in_base and not cmp.only_in_new
