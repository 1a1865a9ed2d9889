"""``torch.compile`` regions inside a library's op, under a virtual device: the op runs, and each compiled function
it calls is compiled by TorchInductor as on the target's GPU and recorded, instead of failing on the absent device.

Installed with the face (:mod:`harness.intake.face`), before any user module is imported, so that a library that
compiles a function at import (``f = torch.compile(g)``) or decorates one (``@torch.compile``) gets the wrapper.
Nothing of Dynamo or Inductor is imported until a compiled function is first called; then Inductor's answers are put
on (:mod:`harness.intake.inductor_face`), the call's CUDA-faced tensors become FakeTensors on ``cuda`` of the same
sizes, strides and dtypes, the real compiled function runs on them (Inductor's lowering, heuristics and wrapper, its
kernels recorded, none run), and its outputs come back as CUDA-faced tensors to the rest of the op.

Functions only: a compiled ``nn.Module`` keeps torch's own ``torch.compile`` (its parameters would have to become
fakes too); one that the op calls still fails as before, and a ``compiled:`` entry captures it instead.
"""

from __future__ import annotations

import functools
import inspect
import os
import tempfile
from typing import Any, Callable

_ORIGINAL: list[Callable[..., Any]] = []
_WORN: list[bool] = []
_FACE: list[Any] = []  # the face this process wears (given by the face itself: this module cannot import it)


def install(face: Any) -> None:
    """Replace ``torch.compile`` for the rest of this process, which wears ``face`` (Inductor is faced with it
    at the first compiled call)."""
    import torch

    if _ORIGINAL:
        return
    _FACE.append(face)
    _ORIGINAL.append(torch.compile)
    torch.compile = _compile  # type: ignore[assignment]


def real_compile() -> Callable[..., Any]:
    """torch's own ``torch.compile`` (what a ``compiled:`` entry's capture calls, with the fakes it made itself)."""
    import torch

    return _ORIGINAL[0] if _ORIGINAL else torch.compile


def _compile(model: Any = None, **kwargs: Any) -> Any:
    if model is None:  # @torch.compile(mode=...)
        return lambda m: _compile(m, **kwargs)
    if not (inspect.isfunction(model) or inspect.ismethod(model)):
        return _ORIGINAL[0](model, **kwargs)
    return _Region(model, kwargs)


class _Region:
    """A compiled function of the op's: compiled on first call, then run on fakes each call."""

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.fn, self.kwargs = fn, kwargs
        self.compiled: Callable[..., Any] | None = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from harness.intake import inductor_face
        from harness.support import lifeline

        if not _WORN:
            # a worker's scratch (removed with the worker), else the temporary folder (a probe child's own)
            scratch = tempfile.mkdtemp(prefix="harness-inductor-", dir=os.environ.get(lifeline.SCRATCH_ENV))
            inductor_face.wear(scratch, _FACE[0])
            _WORN.append(True)
        if self.compiled is None:
            given = {k: v for k, v in self.kwargs.items() if k not in ("mode", "options")}
            options = inductor_face.compile_options(self.kwargs.get("mode"), self.kwargs.get("options") or {})
            self.compiled = _ORIGINAL[0](self.fn, **given, options=options)
        compiled = self.compiled
        return inductor_face.pop_face_mode(lambda: _on_fakes(compiled, args, kwargs))


def _on_fakes(compiled: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    import torch

    from harness.support import torchcompat

    FakeTensorMode, tree_map = torchcompat.fake_tensor_mode(), torchcompat.tree_map()

    def fake(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device="cuda")
        return x

    with FakeTensorMode(allow_non_fake_inputs=True):
        out = compiled(*tree_map(fake, args), **tree_map(fake, kwargs))
    return tree_map(_faced, out)


def _faced(x: Any) -> Any:
    import torch

    from harness.intake.face_tensors import FaceTensor

    if isinstance(x, torch.Tensor):
        meta = torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device="meta")
        return meta.as_subclass(FaceTensor)
    return x


def kernels() -> list[dict[str, Any]]:
    """The kernels the op's compiled regions launched in this process so far: name, heuristic, configs."""
    if not _WORN:
        return []
    from harness.authoring.decorated import config_dict
    from harness.intake import inductor_launches

    recorded = inductor_launches.recorder().kernels.items()
    return [
        {"kernel": name, "heuristic": str(getattr(k.autotuner.heuristic_type, "name", "")).lower(),
         "configs": [config_dict(c) for c in k.autotuner.configs]}
        for name, k in sorted(recorded, key=lambda item: item[1].first_launch)
        if k.launches
    ]  # fmt: skip


def reset() -> None:
    """Forget what was recorded (each op capture starts from nothing)."""
    if _WORN:
        from harness.intake import inductor_launches

        inductor_launches.fresh()
