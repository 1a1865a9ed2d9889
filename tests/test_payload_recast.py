"""Records are built from the workers' typed replies, not through their JSON: a GPU config's reply becomes the
record's runtime entry (``Payload.recast``) and a real build's reply its record (``Record.built``). Each must be what
the JSON round trip gave before (the same fields, the same keys in the same order, a failed reply's traceback kept),
and what does not fit is refused by name."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.device.timing import summarize
from harness.model.payloads import Payload
from harness.model.replies import ConfigReply
from harness.model.runtime import Check, LaunchedBinary, Runtime, WorkModel


def _reply(**failed: str) -> ConfigReply:
    timing = summarize([10.5, 10.0, 11.25, 10.75], "isolated", rotated=3, discarded=2).updated(flush_bytes=1 << 26)
    return ConfigReply(
        status=failed.get("status", "ok"),
        stage="full",
        correctness=Check(status="ok", max_abs_err=0.0009765625, mismatched=0, elements=4096, atol=0.01),
        first_launch_s=0.412,
        launched_binary=LaunchedBinary(kind="cubin", sha256="ab" * 32, cache_key="k"),
        timing=timing,
        tflops=312.5,
        gbps=None,
        model=WorkModel(flops=2.0e12, bytes=1.5e9),
        **{k: v for k, v in failed.items() if k != "status"},
    )


@pytest.mark.parametrize(
    "reply",
    [_reply(), _reply(status="error", error="RuntimeError: boom", traceback="Traceback ...", retire_worker="x")],
    ids=["ok", "failed"],
)
def test_a_config_reply_recast_is_its_json_round_trip(reply: ConfigReply) -> None:
    wire = ConfigReply.from_wire(json.loads(json.dumps(reply.to_json())))  # as Worker.send reads it
    before = Runtime.from_json(wire.to_json())
    after = wire.recast(Runtime)
    assert after == before
    assert json.dumps(after.to_json()) == json.dumps(before.to_json())
    assert after.timing is wire.timing  # the timer's object itself, raw samples and all
    if reply.traceback:
        assert after.extra == {"traceback": "Traceback ...", "retire_worker": "x"}


def test_a_field_held_otherwise_is_refused_by_name() -> None:
    @dataclass(frozen=True)
    class Other(Payload):
        timing: float | None = None

    with pytest.raises(TypeError, match="hold timing differently"):
        _reply().recast(Other)


def test_a_real_builds_record_from_its_reply_is_the_one_its_json_gave(tmp_path: Path) -> None:
    from helpers import compile_one

    from harness.model.records import Record
    from harness.model.replies import CompileReply

    wire = compile_one("vector_add", "fp32", {"N": 4096}, "mi300x", {"BLOCK": 1024, "num_warps": 4}, tmp_path)
    base = {"kernel": "vector_add", "dtype": "fp32", "shape": {"N": 4096}, "target": "mi300x", "arch": "gfx942",
            "vendor": "amd", "triton": "3.6.0", "config": {"BLOCK": 1024, "num_warps": 4}, "config_id": "B1024_w4",
            "meta": {"BLOCK": 1024}, "origin": "matrix", "mode": "compile"}  # fmt: skip
    before = Record.from_dict({**base, **{k: v for k, v in wire.items() if k != "triton"}}, strict=True)
    reply = CompileReply.from_wire(wire)
    after = Record.built(base, reply, leave=("triton",))
    assert wire["status"] == "ok" and after.artifacts and after.flags is not None
    assert after == before
    assert json.dumps(after.to_dict()) == json.dumps(before.to_dict())
    assert after.resources is reply.resources  # the worker's own object
    with pytest.raises(ValueError, match="does not know: stray"):  # a key an older cache entry kept, say
        Record.built(base, CompileReply.from_json({**wire, "stray": 1}), leave=("triton",))


def _declared_by(cls: type, name: str) -> type:
    """The class in ``cls``'s hierarchy whose own body declares the field ``name``."""
    return next(c for c in cls.__mro__ if name in vars(c).get("__annotations__", {}))


@pytest.mark.parametrize(
    ("reply", "kept_as", "own"),
    [
        # the worker's Triton (the record keeps the case's pin); a compiled kernel's check made at capture, the
        # record's own field, as an interpreter record's
        ("CompileReply", "Record", {"triton", "correctness"}),
        ("ConfigReply", "Runtime", set()),
        ("BaselinesReply", "Runtime", set()),
    ],
)
def test_each_figure_a_reply_carries_is_declared_once_for_it_and_its_record(
    reply: str, kept_as: str, own: set[str]
) -> None:
    """A figure a worker reports and a record keeps is one declaration both classes inherit, so a new figure is
    one line, not two lists edited together. What became of the job (``status``, ``error``, ``traceback``) is the
    reply's and the record's own verdict, typed differently on each side."""
    import dataclasses

    from harness.model import records, replies, runtime

    modules = (records, replies, runtime)
    sender, keeper = (next(getattr(m, n) for m in modules if hasattr(m, n)) for n in (reply, kept_as))
    shared = {f.name for f in dataclasses.fields(sender)} & {f.name for f in dataclasses.fields(keeper)}
    figures = shared - {"status", "error", "traceback", "extra", "given"} - own
    twice = sorted(n for n in figures if _declared_by(sender, n) is not _declared_by(keeper, n))
    assert len(figures) >= 4 and not twice, f"declared in both {reply} and {kept_as}: {twice}"
