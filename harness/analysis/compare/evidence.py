"""What a change between two builds says beyond "it changed": how the instruction mix and resources moved, the
kind of change it is (for grouping), and the ``harness repro`` arguments that rebuild the new build."""

from __future__ import annotations

from harness.model.records import BINARY_KINDS, Record

#: what a changed binary's line says moved: the instruction mix and the figures a limit is checked on
MIX = ("mma", "wgmma", "tcgen05_mma", "mfma", "shared_loads", "shared_stores", "async_copies", "global_loads",
       "global_stores", "barriers", "local_ops", "registers", "spill_bytes", "shared")  # fmt: skip


def changed_binary(ra: Record, rb: Record) -> str | None:
    """The binary kind (cubin, hsaco) both builds wrote, when its code differs between them; else None.

    Bytes that differ only in the source-line table (``code_sha256`` alike: ptxas records the source files'
    modification times there, so two fresh checkouts give two byte sequences of one binary) are no change."""
    kind = next((k for k in BINARY_KINDS if k in ra.artifacts and k in rb.artifacts), None)
    if kind is None or ra.artifacts[kind].sha256 == rb.artifacts[kind].sha256:
        return None
    a, b = ra.artifacts[kind].code_sha256, rb.artifacts[kind].code_sha256
    return None if a is not None and a == b else kind


def mix_delta(ra: Record, rb: Record) -> str:
    """How a changed binary's instruction mix and resources moved, e.g. ``shared_loads 8->12, barriers 6->8``
    (counted in each build's own PTX or AMDGCN when it was built: :data:`harness.compiling.resources.MIX`)."""
    moved = []
    for name in MIX:
        va, vb = getattr(ra.resources, name), getattr(rb.resources, name)
        if va != vb and va is not None and vb is not None:
            moved.append(f"{name} {va}->{vb}")
    return ", ".join(moved) or "same instruction mix and resources"


def signature(ra: Record, rb: Record) -> str:
    """A changed binary's kind of change: which mix figures went up and which down."""
    ups = [n for n in MIX if (getattr(rb.resources, n) or 0) > (getattr(ra.resources, n) or 0)]
    downs = [n for n in MIX if (getattr(rb.resources, n) or 0) < (getattr(ra.resources, n) or 0)]
    said = [f"{', '.join(ups)} up"] if ups else []
    said += [f"{', '.join(downs)} down"] if downs else []
    return "changed binary: " + ("; ".join(said) or "same mix")


def repro_args(r: Record) -> str:
    """``harness repro``'s arguments after the run directory for the build ``r`` (with ``--out`` where its GPU check
    failed: the launch's inputs are saved beside the script)."""
    if not r.case_id:
        return ""
    return f"'{r.case_id}' --config {r.config_id}" + (f" --out repro_{r.config_id}.py" if gpu_mismatch(r) else "")


def gpu_mismatch(r: Record) -> bool:
    """The build's config launched on a GPU and failed its check against the reference."""
    return r.runtime is not None and r.runtime.status == "mismatch"
