"""Every private name of torch the harness imports, in one place, as :mod:`harness.support.tritoncompat` is for
Triton: Inductor's runtime (its autotuner, heuristics and helpers), its config and template selection, Dynamo,
FakeTensorMode, the pytree helpers and the torch-function mode stack.

These move between torch releases (``harness.intake.inductor.inductor_face.SUPPORTED`` lists the checked ones); the rest of
the harness reaches them only through the functions here, each a lazy import (this module imports nothing of torch
when it is imported: a run's main process never loads torch), so a release that moves one fails in one place, and
tests/test_torchcompat.py calls every one on the installed torch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Callable


def fake_tensor() -> Any:
    """``torch._subclasses.fake_tensor`` (``FakeTensorMode``, its ``init_gpu_context``)."""
    from torch._subclasses import fake_tensor as module

    return module


def fake_tensor_mode() -> Any:
    return fake_tensor().FakeTensorMode


def tree_map() -> Callable[..., Any]:
    """``torch.utils._pytree.tree_map``."""
    from torch.utils._pytree import tree_map as fn

    return fn


def pop_mode_temporarily() -> Any:
    """``torch.overrides._pop_mode_temporarily``: the innermost torch-function mode, off for a block."""
    from torch.overrides import _pop_mode_temporarily

    return _pop_mode_temporarily()


def dynamo() -> Any:
    """``torch._dynamo`` (its ``reset``)."""
    import torch._dynamo as module

    return module


def dynamo_guards() -> Any:
    """``torch._C._dynamo.guards`` (the compiled wrapper's C++ allocation helpers)."""
    from torch._C._dynamo import guards

    return guards


def inductor_config() -> Any:
    """``torch._inductor.config``."""
    import torch._inductor.config as module

    return module


def set_inductor_config(settings: dict[str, bool | int], where_present: bool = False) -> None:
    """``torch._inductor.config``'s attributes set, each by its dotted name (``triton.cudagraphs``;
    :data:`harness.model.inductor_policies.SETTINGS`); ``where_present``: a name this torch lacks is left out."""
    config = inductor_config()
    for name, value in settings.items():
        *path, last = name.split(".")
        owner = config
        for part in path:
            owner = getattr(owner, part)
        if where_present and not hasattr(owner, last):
            continue
        setattr(owner, last, value)


def triton_heuristics() -> Any:
    """``torch._inductor.runtime.triton_heuristics`` (``CachingAutotuner``, ``GridExpr``)."""
    from torch._inductor.runtime import triton_heuristics as module

    return module


def compile_fx_module() -> Any:
    """``torch._inductor.compile_fx`` (``compile_fx``, the Inductor backend's entry, looked up there at each call)."""
    from torch._inductor import compile_fx as module

    return module


def coordinate_descent_tuner() -> Any:
    """``torch._inductor.runtime.coordinate_descent_tuner`` (``get_field``, ``set_field``, ``CoordescTuner``)."""
    from torch._inductor.runtime import coordinate_descent_tuner as module

    return module


def triton_helpers() -> Any:
    """``torch._inductor.runtime.triton_helpers`` (``set_driver_to_gpu``)."""
    from torch._inductor.runtime import triton_helpers as module

    return module


def inductor_runtime_hints() -> Any:
    """``torch._inductor.runtime.hints`` (``DeviceProperties``), which a kernel module imports."""
    import torch._inductor.runtime.hints as module

    return module


def select_algorithm() -> Any:
    """``torch._inductor.select_algorithm`` (``AlgorithmSelectorCache``)."""
    from torch._inductor import select_algorithm as module

    return module


def list_mode_options(mode: str) -> dict[str, Any]:
    """``torch._inductor.list_mode_options``: the Inductor options a ``torch.compile`` mode stands for."""
    from torch._inductor import list_mode_options as fn

    return dict(fn(mode))


def triton_cache_dir(device: int) -> str:
    """``torch._inductor.runtime.cache_dir_utils.triton_cache_dir``: where Inductor's Triton builds for a device go."""
    from torch._inductor.runtime.cache_dir_utils import triton_cache_dir as fn

    return str(fn(device))


def triton_hash_to_path_key(key: str) -> str:
    """``torch._inductor.runtime.runtime_utils.triton_hash_to_path_key``: Triton's hex key to its cache folder."""
    from torch._inductor.runtime.runtime_utils import triton_hash_to_path_key as fn

    return str(fn(key))


def inductor_lowering() -> bool:
    """Whether Inductor is lowering a graph in this thread now (``torch._inductor.virtualized.V.graph`` is set): what
    it decides then is what its kernels are made from, unlike Dynamo's and AOT's earlier traces of the same ops."""
    from torch._inductor.virtualized import NullHandler, V

    return not isinstance(V.graph, NullHandler)


def suggest_memory_format() -> Callable[[Any], Any]:
    """``torch._prims_common.suggest_memory_format``: ATen's ``Tensor.suggest_memory_format`` in Python."""
    from torch._prims_common import suggest_memory_format as fn

    return fn


def replace_conv_memory_format(make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """``torch._C._conv_determine_backend_memory_format`` (what FakeTensor's convolution asks for its output's
    layout) replaced by ``make(original)``, for the rest of this process."""
    import torch

    torch._C._conv_determine_backend_memory_format = make(torch._C._conv_determine_backend_memory_format)


def disable_torch_function() -> Any:
    """``torch._C.DisableTorchFunction()``: torch-function modes and tensor subclasses' overrides off for a block."""
    import torch

    return torch._C.DisableTorchFunction()


def gpu_runtime_built() -> bool:
    """Whether this torch is a CUDA or ROCm build (``torch._C`` has the device count of one)."""
    import torch

    return hasattr(torch._C, "_cuda_getDeviceCount") or hasattr(torch._C, "_hip_getDeviceCount")


def stub_cuda_runtime() -> None:
    """What a compiled wrapper and Dynamo call of the CUDA runtime, answered without a device, for the rest of this
    process: the wrapper's device guard (``torch.cuda._exchange_device``, ``_maybe_exchange_device``) and raw-stream
    getter (``torch._C._cuda_getCurrentRawStream``); and where this torch lacks them, the CUDA-graph trees' allocator
    names that ``torch._dynamo.reset`` imports (``mode="reduce-overhead"`` is not captured: they need only exist)."""
    import torch

    cuda: Any = torch.cuda
    runtime: Any = torch._C
    cuda._exchange_device = lambda device: 0
    cuda._maybe_exchange_device = lambda device: 0
    runtime._cuda_getCurrentRawStream = lambda device=0: 0
    if not hasattr(runtime, "_cuda_CUDAAllocator_AllocatorState"):
        runtime._cuda_CUDAAllocator_AllocatorState = type("AllocatorState", (), {})
        runtime._set_cached_tensors_enabled = lambda enabled: None


#: ATen's fused attention ops by the backend that runs them (``torch.ops.aten._scaled_dot_product_*``); ``flash_cpu``
#: is the CPU build's flash attention, which the host check runs in the GPU-only kernels' place
ATTENTION_OPS = {
    "cudnn": "_scaled_dot_product_cudnn_attention",
    "flash": "_scaled_dot_product_flash_attention",
    "efficient": "_scaled_dot_product_efficient_attention",
    "math": "_scaled_dot_product_attention_math",
    "flash_cpu": "_scaled_dot_product_flash_attention_for_cpu",
}


def attention_op(backend: str) -> Any:
    """The ATen op (an ``OpOverloadPacket``) of one attention backend (:data:`ATTENTION_OPS`)."""
    import torch

    return getattr(torch.ops.aten, ATTENTION_OPS[backend])


def gpu_sleep(cycles: int) -> None:
    """``torch.cuda._sleep``: the current stream spins ``cycles`` GPU clock cycles (what keeps a GPU busy while
    the host enqueues, so host cost does not land between two timing events)."""
    import torch

    torch.cuda._sleep(cycles)


def wrapper_subclass(cls: type, like: Any, device: Any) -> Any:
    """``torch.Tensor._make_wrapper_subclass``: an instance of the tensor subclass ``cls`` with ``like``'s sizes,
    strides, offset and dtype on ``device``, holding no storage of its own."""
    import torch

    return torch.Tensor._make_wrapper_subclass(
        cls, like.shape, strides=like.stride(), storage_offset=like.storage_offset(), dtype=like.dtype,
        device=device, requires_grad=False,
    )  # fmt: skip


def drop_library(lib: Any) -> None:
    """A ``torch.library.Library``'s registrations taken back (its ``_destroy``): kernels given for a block only."""
    lib._destroy()


def dynamo_source(node: Any) -> Any:
    """Where Dynamo took a graph input from on the user's frame (an FX placeholder's ``_dynamo_source``), or None."""
    return getattr(node, "_dynamo_source", None)


# --- the patches of Inductor the harness makes, each by name: what it replaces is here, what it replaces it with is
# the caller's (the capture under a face: harness.intake.inductor.inductor_face; the GPU worker that holds a kernel
# to a config: harness.intake.inductor.inductor_spec; the host check: harness.intake.inductor.compiled_check)


def keep_lifting_fake_tensors() -> None:
    """``FakeTensorMode.avoid_device_init`` always true: with CUDA "available" it would stop lifting ``torch.tensor``
    from the CPU and initialise the absent device."""
    fake_tensor_mode().avoid_device_init = property(lambda self: True)


def keep_triton_driver() -> None:
    """``triton_helpers.set_driver_to_gpu`` does nothing: a kernel module would put the real driver back in place of
    the face's."""
    triton_helpers().set_driver_to_gpu = lambda: None


def replace_autotuner_methods(**methods: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """``CachingAutotuner``'s methods by name (``precompile``, ``run``) replaced; the originals returned."""
    autotuner = triton_heuristics().CachingAutotuner
    originals = {name: getattr(autotuner, name) for name in methods}
    for name, method in methods.items():
        setattr(autotuner, name, method)
    return originals


def replace_wrapper_allocators(empty_strided: Callable[..., Any], reinterpret: Callable[..., Any]) -> None:
    """The compiled wrapper's C++ allocation helpers (``torch._C._dynamo.guards._empty_strided_cuda``,
    ``_reinterpret_tensor``), which want a real CUDA allocation, replaced."""
    guards = dynamo_guards()
    guards._empty_strided_cuda = empty_strided
    guards._reinterpret_tensor = reinterpret


def replace_choice_benchmark(benchmark: Callable[..., Any]) -> None:
    """``AlgorithmSelectorCache.benchmark`` (how max-autotune times its choices on the device) replaced."""
    select_algorithm().AlgorithmSelectorCache.benchmark = staticmethod(benchmark)


@contextlib.contextmanager
def compile_fx_replaced(make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Iterator[None]:
    """``compile_fx.compile_fx`` (the Inductor backend's entry, looked up there at each call) replaced by
    ``make(original)`` for the block."""
    module = compile_fx_module()
    original = module.compile_fx
    module.compile_fx = make(original)
    try:
        yield
    finally:
        module.compile_fx = original


def use_launchers(autotuner: Any, launchers: list[Any]) -> None:
    """An autotuner's launchers set, its cached fast-path launcher (torch 2.13's ``_cached_launcher``) forgotten."""
    autotuner.launchers = launchers
    if hasattr(autotuner, "_cached_launcher"):
        autotuner._cached_launcher = None


#: every accessor above that takes no argument (tests/test_torchcompat.py calls each on the installed torch)
ACCESSORS: tuple[Callable[[], Any], ...] = (
    fake_tensor, fake_tensor_mode, tree_map, dynamo, dynamo_guards, inductor_config, triton_heuristics,
    triton_helpers, inductor_runtime_hints, select_algorithm, suggest_memory_format,
)  # fmt: skip
