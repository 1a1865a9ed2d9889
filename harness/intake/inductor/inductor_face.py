"""What TorchInductor needs of a virtual device beyond what a library's op needs: the private torch names a
``torch.compile`` reaches on the way from Dynamo to the kernels' launches, each answered so that Inductor's own
code (lowering, scheduling, codegen, its per-kernel config heuristics, the compiled wrapper's launches) runs as it
does on the target's GPU, with nothing allocated and nothing launched.

Put on once per capture child, after the face (:mod:`harness.intake.virtual_device.face`) and before ``torch._dynamo`` or
``torch._inductor`` is imported: Inductor binds ``torch.cuda`` and ``torch.version.hip`` into many choices at
import (``_dynamo/device_interface.py``, ``runtime/hints.py``, the template-heuristics registry), so a later face
would be half worn. Each patch names the wall it passes (``shared/notes/inductor-facts.md`` walked them, on torch
2.13 with Triton 3.6; :data:`SUPPORTED` lists the torch releases this is checked on, and :func:`check_torch`
refuses any other in one line). Two answers live in modules of their own: what Inductor's passes compute on the
device itself, computed on the host (:mod:`harness.intake.virtual_device.device_values`), and the attention backend the target's
torch runs (:mod:`harness.intake.virtual_device.sdpa_dispatch`).

What Inductor decides by running on a device is a named policy here, never a measurement (:data:`POLICIES`): its
autotuner's winner (the first config), max-autotune's choice (the first template choice it lists), epilogue fusion
by benchmark (off) and ``pad_mm`` (off: no padding).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path
from typing import Any, Callable, Mapping

from harness.intake.inductor.inductor_launches import (  # re-exported: the capture's names for them
    _INDUCTOR_RUN,
    _recording_precompile,
    _recording_run,
    fresh,
    recorder,
)
from harness.intake.virtual_device import conv_layout, device_values, sdpa_dispatch
from harness.model import inductor_policies
from harness.support import torchcompat

#: torch releases (major.minor) whose private names these patches are checked against: 2.13 by the suite on a CPU
#: torch (tests/test_compiled_capture.py), 2.11 (a CUDA build) by the parity run on an H100 (docs/performance.md,
#: benchmarks/compiled_parity.py); a CPU-only 2.11 is not checked
SUPPORTED = ("2.11", "2.13")

#: what a GPU would decide by measuring, and what the capture decides instead (stated in each record and report)
POLICIES = inductor_policies.POLICIES  # what a record's and the report's policy names mean


class InductorFaceError(Exception):
    """This torch cannot be faced for Inductor (an unsupported release, or a private name moved); one line."""


#: set to 1 to capture under a torch not in :data:`SUPPORTED` anyway (to check a new release: the tables then say
#: ``torch_checked: false``)
UNCHECKED = "HARNESS_COMPILED_UNCHECKED_TORCH"


def checked(version: str) -> bool:
    return ".".join(version.split("+")[0].split(".")[:2]) in SUPPORTED


def check_torch(version: str) -> None:
    """Refuse a torch whose Inductor internals the capture is not checked against, naming the supported ones."""
    if not checked(version) and os.environ.get(UNCHECKED) != "1":
        raise InductorFaceError(
            f"torch {version} is not supported for compiled capture (checked on torch {', '.join(SUPPORTED)}): "
            f"Inductor's private names it patches move between releases; {UNCHECKED}=1 tries it anyway"
        )


def wear(cache_dir: str, face: Any) -> None:
    """Put on, for this process, the answers Inductor needs (``face``, the target's, must be worn already)."""
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir  # per face: no FX-graph or autotune cache across faces
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # pool workers would not wear the face
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    import torch

    check_torch(torch.__version__)
    fresh()
    _register_cuda_guard(torch)
    device_values.wear()  # the passes that compute on the device itself (constant folding, flex attention's masks)
    sdpa_dispatch.wear(face)  # the attention backend the target's torch would run
    conv_layout.wear(face.vendor)  # a convolution's output layout as the target's conv library gives it
    _wear_runtime(torch)
    _wear_fake_tensors()
    _wear_inductor()


def _wear_runtime(torch: Any) -> None:
    cuda = torch.cuda
    # wall 0: Dynamo saves and restores the CUDA RNG state; torch.cuda.random bound current_device by name
    cuda.get_rng_state = lambda device="cuda": torch.zeros(16, dtype=torch.uint8)
    cuda.set_rng_state = lambda new_state, device="cuda": None
    cuda.get_rng_state_all = lambda: [torch.zeros(16, dtype=torch.uint8)]
    cuda.set_rng_state_all = lambda new_states: None
    # the compiled wrapper's device guard; wall 4: its raw-stream getter; the CUDA-graph trees' names
    torchcompat.stub_cuda_runtime()


#: wall 3: C++ paths that take a CUDA device guard (slicing, ``.to("cuda")``, ``randperm`` on fakes) need one
#: registered; a CPU-only build has none, and ``torch._C._ensureCUDADeviceGuardSet`` does nothing there. torch's own
#: fake guard implementation, registered for CUDA, is what a CUDA build's fake tensors use. A plain shared library
#: whose static initialiser registers it: c10's headers only (``torch/extension.h`` and a Python module cost 20
#: CPU-seconds to compile on a small machine, these about 1).
_GUARD_SOURCE = """
#include <c10/core/impl/FakeGuardImpl.h>
C10_REGISTER_GUARD_IMPL(CUDA, c10::impl::FakeGuardImpl<c10::DeviceType::CUDA>);
"""


def _register_cuda_guard(torch: Any) -> None:
    """Build (once per torch, in the harness cache; about 2 s on 2 cores) and load the guard library, where this
    torch has no CUDA guard of its own (a CPU build); a CUDA or ROCm build keeps its own."""
    if torchcompat.gpu_runtime_built():
        return  # a CUDA or ROCm build: its own guard is registered
    import hashlib

    from harness.support.cache import cache_dir

    key = hashlib.sha256((_GUARD_SOURCE + torch.__version__).encode()).hexdigest()[:12]
    where = cache_dir() / "inductor-guard" / key
    marker = where / "library"  # the built library's path, written once a build has finished
    with contextlib.suppress(OSError):
        built = Path(marker.read_text())
        if built.is_file():
            # loaded as cpp_extension loads it, without importing cpp_extension (it imports setuptools' 70 modules)
            torch.ops.load_library(str(built))
            return
    from torch.utils import cpp_extension

    where.mkdir(parents=True, exist_ok=True)
    source = where / "guard.cpp"
    if not source.is_file():
        source.write_text(_GUARD_SOURCE)
    built = cpp_extension.load(name=f"harness_cuda_guard_{key}", sources=[str(source)], build_directory=str(where),
                               is_python_module=False, verbose=False)  # fmt: skip
    with contextlib.suppress(OSError):  # an unwritable cache only costs the next process cpp_extension's own check
        tmp = marker.with_suffix(f".{os.getpid()}")
        tmp.write_text(str(built))
        tmp.replace(marker)


def _wear_fake_tensors() -> None:
    # wall 2: the face makes CUDA "available", so FakeTensorMode would stop lifting torch.tensor from CPU and try
    # the absent device; it keeps lifting
    torchcompat.keep_lifting_fake_tensors()


def _wear_inductor() -> None:
    torchcompat.set_inductor_config(inductor_policies.SETTINGS)  # walls 9 and 10 are policies among them
    # wall 5: a kernel module would put the real CUDA driver back in place of the face's
    torchcompat.keep_triton_driver()
    # wall 6: keep each autotuner as Inductor built it; nothing is compiled here (the harness builds each config);
    # wall 7: the wrapper's launches, recorded with their grids per config
    originals = torchcompat.replace_autotuner_methods(precompile=_recording_precompile, run=_recording_run)
    _INDUCTOR_RUN.append(originals["run"])
    _wear_wrapper_allocations()
    _wear_autotune_select()


_ALLOCATE_ON = ["cuda"]


@contextlib.contextmanager
def on_host() -> Any:
    """The compiled wrapper's allocations on the CPU for the block (its call run on real host tensors)."""
    _ALLOCATE_ON.append("cpu")
    try:
        yield
    finally:
        _ALLOCATE_ON.pop()


def _wear_wrapper_allocations() -> None:
    """wall 7: the wrapper allocates with C++ helpers that want a real CUDA allocation; on fakes, Python ones."""
    import torch

    def empty_strided_cuda(size: Any, stride: Any, dtype: Any) -> Any:
        return torch.empty_strided(size, stride, dtype=dtype, device=_ALLOCATE_ON[-1])

    def reinterpret_tensor(base: Any, size: Any, stride: Any, offset: int = 0) -> Any:
        return base.as_strided(size, stride, base.storage_offset() + offset)

    torchcompat.replace_wrapper_allocators(empty_strided_cuda, reinterpret_tensor)


_FAKE_TIME = itertools.count(1)


def _wear_autotune_select() -> None:
    """wall 8: max-autotune benchmarks each choice on the device; here every choice is recorded (its name and
    description) and timed by rank: the first Triton template listed wins (:data:`POLICIES`). The winner's kernel is
    then generated, precompiled and launched like any other, and recorded there."""

    def benchmark(choices: list[Any], *args: Any, **kwargs: Any) -> dict[Any, float]:
        selection = [_choice(choice) for choice in choices]
        templates = [c for c in choices if type(c).__name__ == "TritonTemplateCaller"]
        ranked = templates + [c for c in choices if c not in templates]
        recorder().choices.append({"choices": selection, "chosen": _choice(ranked[0])["name"] if ranked else None})
        return {c: float(next(_FAKE_TIME)) for c in ranked}

    torchcompat.replace_choice_benchmark(benchmark)


def _choice(choice: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": str(getattr(choice, "name", type(choice).__name__)), "kind": type(choice).__name__}
    description = getattr(choice, "description", None)
    if description:
        out["description"] = str(description)
    bmreq = getattr(choice, "bmreq", None)
    path = getattr(bmreq, "module_path", None)
    if path and os.path.isfile(path):
        out["module_path"] = path
    return out


#: where a capture keeps what it leaves for debugging: a failed capture's whole traceback, Inductor's trace (the
#: run's or ``harness compiled``'s output folder, ``tracebacks/``; the one-line error names the file)
TRACEBACKS = "HARNESS_TRACEBACKS"


def compile_options(mode: str | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """The mode's Inductor options (``torch._inductor.list_mode_options``) with the user's on top, CUDA graphs
    off: they wrap the launches without changing a kernel, and capturing one needs the device (a policy). A trace
    the user turns on (``trace.enabled``) is written under the command's folder, never the working directory."""
    made = {**(torchcompat.list_mode_options(mode) if mode else {}), **options, "triton.cudagraphs": False}
    if made.get("trace.enabled") and "trace.debug_dir" not in made:
        # Inductor's trace goes to ./torch_compile_debug by default: under the run's folder instead, beside the
        # capture's tracebacks (the folder the command set; no folder: Inductor's default)
        import os

        folder = os.environ.get(TRACEBACKS)
        if folder:
            made["trace.debug_dir"] = os.path.join(folder, "inductor-trace")
    return made


def pop_face_mode(call: Callable[[], Any]) -> Any:
    """Run ``call`` with the face's tensor mode off (wall 1: Dynamo would trace into it)."""
    from harness.intake.virtual_device import face_tensors

    if not face_tensors._ENTERED:
        return call()
    with torchcompat.pop_mode_temporarily():
        return call()
