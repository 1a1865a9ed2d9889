"""Values that Inductor computes *on the device itself* while it compiles, computed on the host under a face.

Most of a capture runs on FakeTensors: nothing is allocated and nothing is computed. A few of Inductor's passes do
compute, with no tensor mode active, on real tensors of the graph's device: the joint graph's
``constant_fold_uniform_value`` (``fx_passes/joint_graph.py``) runs ``aten.scalar_tensor`` / ``aten.full`` and the
pointwise ops between them to find uniform constants (``F.cross_entropy``, ``torch.logsumexp``, a causal mask all
reach it), and flex attention's lowering evaluates its mask and score graphs. On a GPU those are tiny CUDA tensors;
under a face the device is ``cuda`` with no CUDA storage (a CPU build has no CUDA kernels; PyPI's CUDA build without
a driver has kernels that cannot initialise), so each ended the capture with "Could not run 'aten::empty...' with
arguments from the 'CUDA' backend" (or "Found no NVIDIA driver").

Here the CUDA dispatch key's two allocators (``empty.memory_format``, ``empty_strided``) make a
:class:`HostBacked` tensor instead: it says ``device='cuda:0'`` as a GPU's tensor does and holds its values in a host
tensor, and every op on it runs on the host and is wrapped again. Every other factory (``full``, ``scalar_tensor``,
``arange``, ``zeros``, ``.to("cuda")``) is composite over those two, so the values the passes read are the values a
GPU would compute, the graph Inductor rewrites with them is the one it rewrites on the GPU, and no Inductor option
(``joint_graph_constant_folding``) has to change the graph. FakeTensorMode and the face's own tensors never reach
these kernels (a mode answers factories before any backend does), so only the no-mode evaluation above does.
"""

from __future__ import annotations

from typing import Any

_WORN: list[Any] = []  # the registration library, kept alive for the process (a dropped Library unregisters)


def wear() -> None:
    """Register the CUDA allocators that make host-backed device tensors, once per process (a capture child)."""
    if _WORN:
        return
    import warnings

    import torch

    host_backed = _host_backed_class(torch)

    def empty(size: Any, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
              memory_format: Any = None) -> Any:  # fmt: skip
        host = torch.empty(size, dtype=dtype, memory_format=memory_format or torch.contiguous_format)
        return host_backed(host, device)

    def empty_strided(size: Any, stride: Any, dtype: Any = None, layout: Any = None, device: Any = None,
                      pin_memory: Any = None) -> Any:  # fmt: skip
        return host_backed(torch.empty_strided(size, stride, dtype=dtype), device)

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # a CUDA build's own kernels are replaced in this child: said, on purpose
        warnings.simplefilter("ignore")
        library.impl("empty.memory_format", empty, "CUDA")
        library.impl("empty_strided", empty_strided, "CUDA")
    _WORN.append(library)


def _host_backed_class(torch: Any) -> Any:
    from harness.support import torchcompat

    tree_map = torchcompat.tree_map()

    class HostBacked(torch.Tensor):
        """A tensor of the faced device whose values live in a host tensor (``host``)."""

        host: Any

        @staticmethod
        def __new__(cls, host: Any, device: Any) -> Any:
            made = torchcompat.wrapper_subclass(cls, host, _faced(torch, device))
            made.host = host
            return made

        def __repr__(self) -> str:  # type: ignore[override]
            return f"HostBacked({self.host!r}, device='{self.device}')"

        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            asked = kwargs.get("device")  # an op that names its output's device (``.cpu()``, ``.to("cuda")``)
            device = [_faced(torch, None)]

            def to_host(x: Any) -> Any:
                if isinstance(x, HostBacked):
                    device[0] = x.device
                    return x.host
                if isinstance(x, torch.device) and x.type == "cuda":
                    return torch.device("cpu")
                return x

            out = func(*tree_map(to_host, args), **tree_map(to_host, kwargs))
            if asked is not None and torch.device(asked).type != "cuda":
                return out  # asked for the host: a host tensor, as ``.cpu()`` gives on a GPU

            def to_device(x: Any) -> Any:
                if isinstance(x, torch.Tensor) and not isinstance(x, HostBacked) and x.device.type == "cpu":
                    return HostBacked(x, device[0])
                return x

            return tree_map(to_device, out)

    return HostBacked


def _faced(torch: Any, device: Any) -> Any:
    device = torch.device(device) if device is not None else torch.device("cuda", 0)
    return torch.device("cuda", 0 if device.index is None else device.index)
