"""``torch.compile`` regions inside a library's op, under a virtual device: the op runs, and each compiled function
it calls is compiled by TorchInductor as on the target's GPU and recorded, instead of failing on the absent device.

Installed with the face (:mod:`harness.intake.virtual_device.face`), before any user module is imported, so that a library that
compiles a function at import (``f = torch.compile(g)``) or decorates one (``@torch.compile``) gets the wrapper.
Nothing of Dynamo or Inductor is imported until a compiled function is first called; then Inductor's answers are put
on (:mod:`harness.intake.inductor.inductor_face`), the call's CUDA-faced tensors become FakeTensors on ``cuda`` of the same
sizes, strides and dtypes, the real compiled function runs on them (Inductor's lowering, heuristics and wrapper, its
kernels recorded, none run), and its outputs come back as CUDA-faced tensors to the rest of the op.

A compiled ``nn.Module`` is a region too: its parameters and buffers are fakes for each call. Each kernel module
Inductor writes here holds an interpreted function, so that the region check (:mod:`harness.intake.inductor.region_check`)
can run each of its configs on the host after the capture, against the region run eagerly.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from harness.intake.inductor.host_graph import Call

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
    import torch

    if isinstance(model, torch.nn.Module):
        return _Region(model, kwargs, module=True)
    if not (inspect.isfunction(model) or inspect.ismethod(model)):
        return _ORIGINAL[0](model, **kwargs)
    return _Region(model, kwargs)


class _Region:
    """A compiled function (or ``nn.Module``) of the op's: compiled on first call, then run on fakes each call."""

    def __init__(self, target: Any, kwargs: dict[str, Any], module: bool = False) -> None:
        self.fn, self.kwargs, self.module = target, kwargs, module
        self.compiled: Callable[..., Any] | None = None
        if not module:
            functools.update_wrapper(self, target)

    def __getattr__(self, name: str) -> Any:  # a compiled module's attributes are the module's
        if name in ("fn", "kwargs", "module", "compiled") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.fn, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from harness.intake.inductor import compiled_check, inductor_face, inductor_launches
        from harness.support import lifeline

        if _ON_HOST:  # the op run on the host for the check: eagerly, each call's arguments kept
            _ON_HOST[-1].append((self.fn, _cloned(args), _cloned(kwargs)))
            return self.fn(*args, **kwargs)
        if not _WORN:
            # a worker's scratch (removed with the worker), else the temporary folder (a probe child's own)
            scratch = tempfile.mkdtemp(prefix="harness-inductor-", dir=os.environ.get(lifeline.SCRATCH_ENV))
            inductor_face.wear(scratch, _FACE[0])
            _WORN.append(True)
        if self.compiled is None:
            given = {k: v for k, v in self.kwargs.items() if k not in ("mode", "options")}
            options = inductor_face.compile_options(self.kwargs.get("mode"), self.kwargs.get("options") or {})
            self.compiled = _ORIGINAL[0](self.fn, **given, options=options)
        compiled, module = self.compiled, self.fn if self.module else None
        before = {n: len(k.launches) for n, k in inductor_launches.recorder().kernels.items()}
        # the kernels Inductor writes now are interpreted ones (their launches are recorded, never run here): the
        # check runs them on the host later, through Inductor's own launcher
        with _interpreted(), compiled_check.keeping_graphs() as graphs:
            out = inductor_face.pop_face_mode(lambda: _on_fakes(compiled, module, args, kwargs))
        launched = [n for n, k in inductor_launches.recorder().kernels.items() if len(k.launches) > before.get(n, 0)]
        _CALLS.append(_Call(tuple(graphs), tuple(launched)))
        return out


@dataclass(frozen=True)
class _Call:
    """One call of a compiled region under the face: the graphs Inductor compiled in it (none where Dynamo's cache
    served it), and the kernels it launched."""

    graphs: tuple[tuple[Any, Any], ...]
    kernels: tuple[str, ...]


_CALLS: list[_Call] = []
#: while the op runs on the host for the check: each region call's (function or module, args, kwargs)
_ON_HOST: list[list[Call]] = []


@contextlib.contextmanager
def _interpreted() -> Iterator[None]:
    """``TRITON_INTERPRET=1`` for the block only: Triton reads it when a function is decorated and Inductor's
    autotuner when it is made, so the op's own kernels (decorated at import) stay what they are."""
    before = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = before


def _cloned(value: Any) -> Any:
    import torch

    from harness.support import torchcompat

    return torchcompat.tree_map()(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, value)


def _on_fakes(compiled: Callable[..., Any], module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    import torch

    from harness.support import torchcompat

    FakeTensorMode, tree_map = torchcompat.fake_tensor_mode(), torchcompat.tree_map()

    def fake(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device="cuda")
        return x

    with FakeTensorMode(allow_non_fake_inputs=True), _fake_weights(module, fake):
        out = compiled(*tree_map(fake, args), **tree_map(fake, kwargs))
    return tree_map(_faced, out)


def _faced(x: Any) -> Any:
    import torch

    from harness.intake.virtual_device.face_tensors import FaceTensor

    if isinstance(x, torch.Tensor):
        meta = torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device="meta")
        return meta.as_subclass(FaceTensor)
    return x


@contextlib.contextmanager
def _fake_weights(module: Any, fake: Callable[[Any], Any]) -> Iterator[None]:
    """A compiled module's parameters and buffers (CUDA-faced tensors) as fakes on ``cuda`` for the block."""
    if module is None:
        yield
        return
    from torch.nn.utils import stateless

    weights = {n: fake(t) for n, t in [*module.named_parameters(), *module.named_buffers()]}
    with stateless._reparametrize_module(module, weights):
        yield


def kernels() -> list[dict[str, Any]]:
    """The kernels the op's compiled regions launched in this process since :func:`reset`, in launch order, each as
    a ``compiled:`` entry's capture gives it (:func:`harness.intake.inductor.inductor_launches.kernel_table`, checks aside)."""
    if not _WORN:
        return []
    from harness.intake.inductor import inductor_launches

    recorded = inductor_launches.launch_order(inductor_launches.recorder())
    return [inductor_launches.kernel_table(name, k) for name, k in recorded]


def calls() -> list[_Call]:
    """Each region call since :func:`reset`, in the op's order."""
    return list(_CALLS)


@contextlib.contextmanager
def on_host() -> Iterator[list[Call]]:
    """For the block, each region called runs eagerly (the op on the host); yields each call's (function or module,
    args, kwargs), in the op's order."""
    _ON_HOST.append([])
    try:
        yield _ON_HOST[-1]
    finally:
        _ON_HOST.pop()


def reset() -> None:
    """Forget what was recorded, and what Dynamo compiled: each op capture starts from nothing, so each shape's
    kernels are Inductor's for that shape (as a ``compiled:`` entry's are), not a recompile for dynamic shapes."""
    _CALLS.clear()
    if _WORN:
        from harness.intake.inductor import inductor_launches
        from harness.support import torchcompat

        inductor_launches.fresh()
        torchcompat.dynamo().reset()
