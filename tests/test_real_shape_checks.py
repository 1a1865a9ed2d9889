"""Model code checked at its real shapes without a GPU, on every face's configs (tests/data/compiled/decoder.py):
a decoder block (RMSNorm, causal SDPA, SwiGLU) with its cross-entropy loss over a 32k vocabulary, a 2-layer
``transformers`` Llama, and a SwiGLU whose Inductor kernel is planted wrong for blocks over 1,024 elements.

Real ``torch.compile`` under each face, real Inductor kernels run by Triton's interpreter through Inductor's own
launcher, the attention the face chose run by ATen's CPU attention, and eager PyTorch as the reference: each
entry's inputs and weights are far over the 2^20 elements the check once stopped at.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import pytest
from helpers import DATA

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(
    not torch.__version__.startswith("2.13"),
    reason=f"compiled capture is checked on torch 2.13 (here {torch.__version__})",
)

MATRIX = DATA / "compiled" / "real_shapes.yaml"


@pytest.fixture(scope="module", params=["h100", "mi300x"])
def checked(request: pytest.FixtureRequest) -> tuple[str, dict[str, list[dict]]]:
    """Each entry's kernels as its capture under the face recorded them, each config with its check."""
    from harness.intake.inductor.compiled_probe import capture
    from harness.matrix import compiled_entries
    from harness.support import yamlpos
    from harness.support.checking import Checker

    doc = yamlpos.load(MATRIX.read_text())
    chk = Checker(str(MATRIX), doc)
    requests = compiled_entries.requests(chk, doc.value["compiled"], MATRIX.parent)
    assert not chk.problems, chk.problems
    before = os.environ.pop("HARNESS_RESULT_CACHE", None)  # the suite's 0 is for the result cache: captured here
    try:
        outcomes = capture(requests, request.param)
    finally:
        if before is not None:
            os.environ["HARNESS_RESULT_CACHE"] = before
    kernels = {}
    for r, outcome in zip(requests, outcomes):
        assert not outcome.why, (r.name, outcome.why)
        ((_, _, table),) = outcome.tables
        assert not isinstance(table, str), (r.name, table)
        kernels[r.name] = table.json["kernels"]  # as the capture child wrote it
    return request.param, kernels


def _checks(kernels: list[dict]) -> list[dict]:
    return [c for k in kernels for c in k["checks"]]


def test_a_model_s_configs_are_checked_at_its_real_shape_on_every_face(checked) -> None:
    """The decoder with its loss, and the Llama: at least 90% of each entry's configs pass on each face (here: all),
    each saying how it was checked at the entry's shape; the attention ran on the host (no config is left unchecked
    for it)."""
    target, kernels = checked
    for entry in ("decoder", "llama"):
        checks = _checks(kernels[entry])
        said = Counter(c["status"] for c in checks)
        assert said["ok"] >= 0.9 * len(checks) and said["mismatch"] == said["error"] == 0, (target, entry, said)
        for c in checks:
            assert c["status"] == "ok" or c.get("reason"), c  # what is not a pass says why
            assert c["status"] != "ok" or "at the entry's shape" in (c.get("reason") or ""), c
        sampled = [c for c in checks if " of " in (c.get("reason") or "") and "programs" in c["reason"]]
        assert entry != "decoder" or sampled, checks  # some configs ran a sample of their programs, and said so
        assert any("every program, the graph against eager" in (c.get("reason") or "") for c in checks)


def test_a_config_dependent_bug_fails_on_the_face_whose_configs_reach_it(checked) -> None:
    """The planted mask drops the last element for blocks over 1,024: MI300X's configs of 2,048 to 8,192 are a
    mismatch, its configs of 512 and 1,024 pass; H100's list stops at 1,024, and all of them pass."""
    target, kernels = checked
    (kernel,) = kernels["planted"]
    assert "XBLOCK > 1024" in kernel["source"]  # the planted store is what Inductor compiled
    by_block = {cfg["XBLOCK"]: check["status"] for cfg, check in zip(kernel["configs"], kernel["checks"])}
    if target == "h100":
        assert by_block == {512: "ok", 1024: "ok"}, by_block
    else:
        assert by_block == {512: "ok", 1024: "ok", 2048: "mismatch", 4096: "mismatch", 8192: "mismatch"}, by_block
        wrong = [c for c in kernel["checks"] if c["status"] == "mismatch"]
        assert all("differs from the reference config on the same programs" in c["error"] for c in wrong), wrong


def test_the_shapes_are_over_what_the_check_once_stopped_at(checked) -> None:
    """Each entry's inputs and weights hold more than 2^20 elements (where the host check used to say "too large
    for Triton's interpreter")."""
    _, kernels = checked
    for name, ks in kernels.items():
        sizes = [math.prod(a["shape"]) for k in ks for launch in k["launches"] for a in launch["args"].values()
                 if isinstance(a, dict)]  # fmt: skip
        assert max(sizes) > 1 << 20, (name, sizes, json.dumps(ks[0]["launches"])[:300])
