"""Whether a kernel's outputs are right, the one rule for every path that checks: the interpreter on a CPU
(:mod:`harness.device.interpret`), a config and the baselines on a GPU (:mod:`harness.device.operations`,
:mod:`harness.device.baselines`) and a repro script's launch (:mod:`harness.device.repro_launch`). The reference is
computed first, on copies the kernel may overwrite; outputs are poisoned so an element never written fails; each
output is compared within the spec's tolerance for the dtype."""

from __future__ import annotations

import math
from typing import Any

from harness.model.runtime import Check


def compare(out: Any, ref: Any, atol: float, rtol: float) -> Check:
    """Element-wise check; a NaN or Inf in the output that the reference lacks always fails."""
    import torch

    o, r = out.detach().float(), ref.detach().float().to(out.device)  # on the output's device: GPU-sized checks
    if o.shape != r.shape:
        return Check(status="mismatch", error=f"shape {tuple(o.shape)} != reference {tuple(r.shape)}")
    bad_nonfinite = int((~torch.isfinite(o) & torch.isfinite(r)).sum())
    diff = (o - r).abs()
    finite = torch.isfinite(diff)
    max_abs = float(diff[finite].max()) if bool(finite.any()) else 0.0
    allowed = atol + rtol * r.abs()
    n_bad = int((~(diff <= allowed)).sum())
    del diff, allowed, finite
    ok = n_bad == 0 and bad_nonfinite == 0
    return Check(
        status="ok" if ok else "mismatch",
        error=None
        if ok
        else (
            f"{n_bad} of {o.numel()} elements outside atol={atol:g} rtol={rtol:g} "
            f"(max abs err {max_abs:.3g}, {bad_nonfinite} non-finite)"
        ),
        max_abs_err=max_abs,
        mismatched=n_bad,
        nonfinite=bad_nonfinite,
        elements=int(o.numel()),
        atol=atol,
        rtol=rtol,
    )


def output_items(value: Any, names: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """The outputs of a launch or reference as (name, tensor): one tensor, a tuple (named by ``names``), a dict."""
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, (tuple, list)):
        return [(names[i] if i < len(names) else str(i), v) for i, v in enumerate(value)]
    return [("out", value)]


def map_outputs(value: Any, fn: Any) -> Any:
    """``fn`` applied to each tensor of an output structure, the structure kept (poisoned ``out`` buffers)."""
    if isinstance(value, dict):
        return {k: fn(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(fn(v) for v in value)
    return fn(value)


def compare_outputs(
    out: Any, ref: Any, spec: Any, dtype: str, floor: tuple[float, float] = (0.0, 0.0), subset: bool = False
) -> Check:
    """Each output against its reference with its own tolerance; the totals at the top, each output under ``outputs``.

    ``floor`` raises every tolerance to at least (atol, rtol) and ``subset`` compares only the outputs
    ``out`` has (baselines: checked loosely, and a library call need not produce every output the kernel
    writes, e.g. torch's RMSNorm returns no RSTD — timing it alone keeps the comparison fair).
    """

    def tol(name: str | None) -> tuple[float, float]:
        atol, rtol = spec.tolerance(dtype, name)
        return max(atol, floor[0]), max(rtol, floor[1])

    refs = output_items(ref, spec.outputs)
    if len(refs) == 1 and not isinstance(ref, (dict, tuple, list)):
        if isinstance(out, (dict, tuple, list)):
            return Check(status="mismatch", error=f"launch returned {len(out)} outputs, the reference one")
        return compare(out, ref, *tol(None))
    got = dict(output_items(out, spec.outputs)) if isinstance(out, (dict, tuple, list)) else {}
    if subset and got and set(got) <= {name for name, _ in refs}:
        refs = [(name, r) for name, r in refs if name in got]
    if set(got) != {name for name, _ in refs}:
        return Check(
            status="mismatch",
            error=f"outputs {sorted(got) or ['one tensor']} != reference {sorted(name for name, _ in refs)}",
        )
    checks = {name: compare(got[name], r, *tol(name)) for name, r in refs}
    bad = [f"{name}: {c.error}" for name, c in checks.items() if c.status != "ok"]
    return Check(
        status="mismatch" if bad else "ok",
        error="; ".join(bad) if bad else None,
        max_abs_err=max(math.inf if c.max_abs_err is None else c.max_abs_err for c in checks.values()),
        mismatched=sum(c.mismatched or 0 for c in checks.values()),
        nonfinite=sum(c.nonfinite or 0 for c in checks.values()),
        elements=sum(c.elements or 0 for c in checks.values()),
        outputs=checks,
    )


def reference_first(spec: Any, inputs: tuple[Any, ...], shape: Any) -> Any:
    """The reference, computed before the kernel runs; on copies of the inputs the kernel overwrites."""
    safe = tuple(t.clone() if i in spec.inplace else t for i, t in enumerate(inputs))
    return spec.reference(safe, shape)


def poisoned_out(spec: Any, reference: Any) -> dict[str, Any]:
    """``{"out": ...}`` of NaN-filled buffers (-1 for integers) shaped as the reference, when ``launch`` takes
    ``out``: an element the kernel never writes then fails the check, on a CPU as on a device."""
    import inspect

    import torch

    if spec.launch is None or "out" not in inspect.signature(spec.launch).parameters:
        return {}
    return {"out": map_outputs(reference, lambda r: torch.full_like(r, float("nan") if r.is_floating_point() else -1))}
