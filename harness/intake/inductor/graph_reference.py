"""What a compiled graph's outputs on the host are held to: eager PyTorch at the entry's dtype, and for half
precision also eager PyTorch in fp32.

A bf16 model's eager outputs round after every op; Inductor's fused kernels keep fp32 between ops, so the two
differ by a few bf16 steps after a layer or two (a 2-layer Llama: 2% of its hidden state's elements beyond the
dtype's tolerance, at most 0.06 on values of a few units) while both are right. As Inductor's own accuracy check
does, the compiled output is then held to a more precise reference: an element passes where it is within the
dtype's tolerance of eager at its dtype, or no further from eager in fp32 than the tolerance plus
:data:`EAGER_ERROR_FACTOR` times eager's own worst error against fp32 (the two round at different ops, so their
errors are alike in size, not in place). A wrong kernel (a wrong formula, a stale element) is far from both; a
config that writes other values than its kernel's reference is caught elementwise by
:mod:`harness.intake.inductor.sampled_check` whatever the model's rounding.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any

from harness.model.runtime import Check

#: dtypes whose eager outputs are also computed in fp32
HALF = ("bf16", "fp16")
#: how many times eager's worst error against fp32 the compiled output may be off from fp32 (besides the dtype's
#: tolerance): the two round at different ops, so their errors are alike in size, not in place
EAGER_ERROR_FACTOR = 2.0


class Reference:
    """Eager's outputs at the entry's dtype, and in fp32 when first asked (None where the dtype is not half
    precision or the function does not run so): most graphs match eager at their dtype and never pay for it."""

    def __init__(self, eager: Any, upcast: Callable[[], Any] | None = None) -> None:
        self.eager = eager
        self._upcast = upcast

    @functools.cached_property
    def fp32(self) -> Any:
        if self._upcast is None:
            return None
        try:
            return self._upcast()
        except Exception:  # noqa: BLE001 - a function that insists on its dtype: eager at it alone
            return None


def made(target: Any, real: tuple[Any, ...], named: Mapping[str, object], dtype: str) -> Reference:
    """Eager's outputs for a call (the caller maps its failure); for half-precision entries also a way to them in
    fp32, the module's weights and the floating inputs upcast."""
    import torch

    with torch.no_grad():
        eager = target(*real, **named)
    if dtype not in HALF:
        return Reference(eager)

    def up(v: Any) -> Any:
        return v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v

    def upcast() -> Any:
        wide = copy.deepcopy(target).float() if isinstance(target, torch.nn.Module) else target
        with torch.no_grad():
            return wide(*map(up, real), **{k: up(v) for k, v in named.items()})

    return Reference(eager, upcast)


def judge(got: Any, reference: Reference, tolerance: tuple[float, float]) -> Check:
    """The graph's outputs against the reference (:mod:`harness.intake.inductor.graph_reference`'s rule)."""
    from harness.authoring.correctness import compare, output_items

    refs = output_items(reference.eager)
    outs = output_items(got[0] if isinstance(got, (list, tuple)) and len(got) == 1 and len(refs) == 1 else got)
    if len(outs) != len(refs):
        return Check(status="mismatch", error=f"{len(outs)} outputs, eager gives {len(refs)}")
    pairs = [(i, o, r) for i, ((_, o), (_, r)) in enumerate(zip(outs, refs)) if hasattr(r, "detach")]
    if any(not hasattr(o, "detach") or type(o).__name__ == "FaceTensor" or o.is_meta for _, o, _ in pairs):
        return Check(status="skipped", reason="the graph allocated an output on the virtual device, not the host")
    checks = []
    for i, o, r in pairs:
        c = compare(o, r, *tolerance)
        if c.status != "ok" and reference.fp32 is not None:
            wides = output_items(reference.fp32)
            w = wides[i][1] if len(wides) == len(refs) else None
            if w is not None and _within_eager_error(o, r, w, tolerance):
                c = Check(status="ok", max_abs_err=c.max_abs_err, reason="within eager's own error against fp32")
        checks.append(c)
    bad = [c for c in checks if c.status != "ok"]
    worst = max((c.max_abs_err or 0.0 for c in checks), default=0.0)
    return Check(status="mismatch" if bad else "ok", error="; ".join(c.error or "" for c in bad) or None,
                 max_abs_err=worst)  # fmt: skip


def _within_eager_error(got: Any, eager: Any, fp32: Any, tolerance: tuple[float, float]) -> bool:
    import torch

    if getattr(fp32, "shape", None) != got.shape or not got.is_floating_point():
        return False
    g, e, w = got.detach().float(), eager.detach().float(), fp32.detach().float()
    finite = torch.isfinite(w)
    own = float((e - w).abs()[finite].max()) if bool(finite.any()) else 0.0  # eager's worst error at its dtype
    allowed = tolerance[0] + tolerance[1] * w.abs() + EAGER_ERROR_FACTOR * own
    return bool(((g - w).abs() <= allowed)[finite].all()) and bool(torch.isfinite(g)[finite].all())
