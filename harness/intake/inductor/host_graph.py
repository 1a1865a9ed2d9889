"""The compiled graph called on the host: its inputs found on the real frame, eager's outputs beside it, and the
context its kernels run in there (the check's host side, :mod:`harness.intake.inductor.compiled_check`).

What is real: the entry's inputs made on the CPU with its seed (an inputs function that makes them elsewhere is
told so), the module's weights (a factory's module built again on the CPU, seeded as the capture's), each graph
input read on the real frame through Dynamo's own source for it, the compiled wrapper's buffers allocated on the
host, its extern calls run by the CPU's aten and the GPU-only attention kernels by ATen's CPU attention.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from harness.intake.inductor import graph_reference
from harness.support import torchcompat

#: an entry whose inputs and weights hold more elements than this is not run on the host (its copies for the
#: check would not fit a CI machine's memory; the interpreter itself runs a sample of each kernel's programs)
MAX_ELEMENTS = 1 << 28
#: a call made on the host: (the function or ``nn.Module``, its positional arguments, its keyword arguments)
Call = tuple[Any, tuple[Any, ...], dict[str, Any]]


class HostError(Exception):
    """The compiled graph cannot be run on the host (one line)."""


def prepared(
    graph: tuple[Any, Any],
    fn: Any,
    make_inputs: Any,
    shape: Mapping[str, int],
    dtype: str,
    factory: bool,
    given: Call | None = None,
) -> tuple[Callable[[Mapping[str, object]], Any], graph_reference.Reference]:
    """(a call of the compiled graph on real host values with some kernels held to a config, eager's outputs)."""
    import torch

    gm, inner = graph
    examples = [n.meta.get("example_value") for n in _placeholders(gm)]
    _refuse_over(sum(int(getattr(e, "numel", lambda: 0)()) for e in examples))  # before anything is made
    if given is not None:  # an op's region: the module or function and arguments its host run called it with
        target, real, named = given
    else:
        target, real, named = _entry_call(fn, make_inputs, shape, dtype, factory)
    frame, own = (type(target).forward, (target,)) if isinstance(target, torch.nn.Module) else (target, ())
    try:
        bound = dict(inspect.signature(frame, follow_wrapped=False).bind(*own, *real, **named).arguments)
        # a function Dynamo cannot trace from its own frame (one of torch's) is compiled through a wrapper that
        # takes (*args, **kwargs): its graph's inputs name those
        bound.setdefault("args", tuple(real))
        bound.setdefault("kwargs", dict(named))
        values = [_source_value(node, bound, getattr(frame, "__globals__", {})) for node in _placeholders(gm)]
    except Exception as exc:  # noqa: BLE001 - a frame this mapping does not know
        raise HostError(f"the graph's inputs could not be found on the host: {type(exc).__name__}: {exc}") from None
    _refuse_over(sum(v.numel() for v in values if isinstance(v, torch.Tensor)))
    try:
        reference = graph_reference.made(target, real, named, dtype)
    except Exception as exc:  # noqa: BLE001 - the user's function, eagerly on the CPU
        raise HostError(f"eager PyTorch on the CPU: {type(exc).__name__}: {str(exc)[:200]}") from None

    def run(held: Mapping[str, object]) -> Any:
        from harness.intake.inductor import inductor_launches

        fresh = [v.clone() if isinstance(v, torch.Tensor) else v for v in values]
        with inductor_launches.holding(held):
            return on_host(lambda: inner(*fresh))

    return run, reference


def on_host(call: Callable[[], Any]) -> Any:
    """``call`` with the compiled wrapper's buffers on the host, the GPU-only attention kernels given CPU ones
    (:func:`harness.intake.virtual_device.sdpa_dispatch.on_host`), Triton's interpreter patched to run its kernels, and the
    virtual device's tensor mode set aside."""
    import torch

    from harness.intake.inductor import inductor_face
    from harness.intake.virtual_device import sdpa_dispatch
    from harness.support.interpreter_patches import as_launcher

    with inductor_face.on_host(), sdpa_dispatch.on_host(), as_launcher(), torch.no_grad():
        return inductor_face.pop_face_mode(call)


def _refuse_over(elements: int) -> None:
    if elements > MAX_ELEMENTS:
        raise HostError(f"inputs and weights hold {elements:,} elements > {MAX_ELEMENTS:,}, more than the host "
                         "check copies: list a smaller shape to check it without a GPU")  # fmt: skip


def _entry_call(fn: Any, make_inputs: Any, shape: Mapping[str, int], dtype: str, factory: bool) -> Call:
    """A compiled entry's call on the host: its function (or its factory's module, seeded as the capture's) and
    its inputs made on the CPU with the entry's seed."""
    import torch

    from harness.authoring import torchutil

    generator = torch.Generator(device="cpu").manual_seed(0)
    named = getattr(make_inputs, "__qualname__", "the inputs function")
    try:
        real = tuple(make_inputs(dict(shape), dtype, "cpu", generator))
    except Exception as exc:  # noqa: BLE001 - the user's inputs function
        raise HostError(f"the inputs function {named} raised on the CPU: {type(exc).__name__}: {exc}") from None
    elsewhere = [f"input {i} on {x.device}" for i, x in enumerate(real) if isinstance(x, torch.Tensor)
                 and x.device.type != "cpu"]  # fmt: skip
    if elsewhere:
        raise HostError(f"the inputs function {named} made {', '.join(elsewhere)} when asked for device 'cpu': "
                         "make each tensor on the device it is given")  # fmt: skip
    if not factory:
        return fn, real, {}
    torch_dtype = torchutil.torch_dtype(dtype)
    before = torch.get_default_dtype()
    torch.manual_seed(0)
    torch.set_default_dtype(torch_dtype if torch_dtype.is_floating_point else before)
    try:
        return fn(dict(shape), dtype), real, {}
    finally:
        torch.set_default_dtype(before)


def _placeholders(gm: Any) -> list[Any]:
    return [n for n in gm.graph.nodes if n.op == "placeholder"]


def _source_value(node: Any, frame_locals: Mapping[str, object], frame_globals: Mapping[str, object]) -> Any:
    """The host value behind one of the graph's inputs: Dynamo's source for it, read on the real frame."""
    source = torchcompat.dynamo_source(node)
    if source is None:
        raise ValueError(f"no source for the graph input {node.name}")
    name = source.name if isinstance(source.name, str) else source.name()
    return eval(name, {"L": frame_locals, "G": frame_globals})  # noqa: S307 - Dynamo's own source expression
