"""Tensors with a CUDA face: ``meta`` tensors (no memory, any size, no values) that say they are on ``cuda:0``.

Entered by :mod:`harness.intake.virtual_device.face` for the rest of a capture process. A torch-function mode turns every
request for a CUDA tensor (a factory's ``device=``, ``.to("cuda")``, ``.cuda()``) into a ``meta`` one and wraps
what an op on such tensors returns, so the library's own Python (shape checks, ``x.is_cuda``, ``x.device.type``,
allocations, strides) runs as it does on a GPU. Chosen over torch's ``FakeTensorMode``, which on a CPU-only torch
refuses slicing and ``.to("cuda")`` of CUDA fakes ("not linked with support for cuda devices").
"""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from harness.support import torchcompat

_CUDA = torch.device("cuda", 0)


class FaceTensor(torch.Tensor):
    """A ``meta`` tensor that answers as a CUDA one."""

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return _CUDA

    @property
    def is_cuda(self) -> bool:  # type: ignore[override]
        return True

    @property
    def is_meta(self) -> bool:  # type: ignore[override]
        return False

    def get_device(self) -> int:  # type: ignore[override]
        return 0

    def data_ptr(self) -> int:  # type: ignore[override]
        return 0

    def __repr__(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        return f"FaceTensor(shape={tuple(self.shape)}, dtype={self.dtype}, device='cuda:0' [virtual])"


def _is_cuda(device: Any) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.startswith("cuda")
    return isinstance(device, int) and not isinstance(device, bool)


def _wrap(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and not isinstance(value, FaceTensor) and value.device.type == "meta":
        return value.as_subclass(FaceTensor)
    return value


class _Mode(TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        faced = False

        def plain(value: Any) -> Any:
            nonlocal faced
            if isinstance(value, FaceTensor):
                faced = True
                return value.as_subclass(torch.Tensor)
            return value

        tree_map = torchcompat.tree_map()
        args, kwargs = tree_map(plain, args), tree_map(plain, kwargs)
        if "device" in kwargs and _is_cuda(kwargs["device"]):
            kwargs["device"], faced = "meta", True
        name = getattr(func, "__name__", "")
        if name == "cuda" and args:
            faced, args = True, (args[0].to("meta") if args[0].device.type != "meta" else args[0],)
            func = _identity
        elif name == "to" and any(_is_cuda(a) for a in args[1:] if isinstance(a, (str, torch.device))):
            faced = True
            args = (args[0], *("meta" if isinstance(a, (str, torch.device)) and _is_cuda(a) else a for a in args[1:]))
        if faced:
            kwargs.pop("generator", None)  # a CPU generator cannot draw meta values (nor are any drawn)
            kwargs.pop("pin_memory", None)
        with torchcompat.disable_torch_function():
            out = func(*args, **kwargs)
        return torchcompat.tree_map()(_wrap, out) if faced else out


def _identity(x: Any) -> Any:
    return x


_ENTERED: list[_Mode] = []


def enter() -> None:
    """Enter the mode for the rest of this process."""
    if not _ENTERED:
        mode = _Mode()
        mode.__enter__()
        _ENTERED.append(mode)
