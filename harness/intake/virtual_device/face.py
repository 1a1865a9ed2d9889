"""A virtual device per target: what a library sees of the GPU while its op is imported and captured *for that
target*, so the launches recorded are the ones the library makes on that vendor, not on the CPU host's code path.

Worn once, for the rest of a process (a capture child, or a compile worker serving one target's builds: a library
imported under the MI300X face is never reused for the H100). It answers, from the target catalogue
(``targets.yaml``) and the faces catalogue (``faces.yaml``, each value with its source):

- torch: ``torch.cuda.is_available`` / ``device_count`` / ``current_device`` / ``get_device_capability`` /
  ``get_device_name`` / ``get_device_properties`` (name, major, minor, multi_processor_count, total_memory,
  warp_size, L2_cache_size, shared memory per block, ``gcnArchName`` on AMD), ``torch.version.cuda`` /
  ``torch.version.hip`` (placeholders naming the toolkit family, not an install), streams and device contexts
  that do nothing;
- tensors: factories asked for ``cuda`` make ``meta`` tensors with a CUDA face (:class:`FaceTensor`: ``is_cuda``,
  ``device.type == "cuda"``, as ROCm torch also reports), ``.to("cuda")`` / ``.cuda()`` likewise; no memory, any
  size, no values (an op that reads one falls back to CPU tensors, and the record says so);
- Triton: the active driver (``get_current_target`` -> ``GPUTarget("cuda", 90, 32)`` / ``GPUTarget("hip",
  "gfx942", 64)``, ``get_current_device``, ``utils.get_device_properties``: max_shared_mem, multiprocessor_count,
  warpSize, max_num_regs on NVIDIA, arch on AMD) and the benchmarker (``triton.testing.do_bench`` too), which runs
  each candidate once with its launches recorded (:mod:`harness.intake.launches.capture`), so an autotuner prunes and
  "benchmarks" exactly as Triton's own code does.

What it cannot answer: clocks and memory bus width (no catalogue value to cite: a library reading them gets the
KeyError a real driver never raises), ``nvidia-smi`` / ``rocm-smi`` subprocesses, CUDA generators, and anything
that needs a value computed on the device.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml

ENV = "HARNESS_FACE"  # the target whose face a process wears (set by the harness in that process's environment)
FACES = Path(__file__).resolve().parents[2] / "model" / "faces.yaml"
_TOOLKIT = {"cuda": "12.8", "hip": "6.4.0"}  # torch.version.cuda / .hip under a face: the family, not an install


class FaceError(Exception):
    """No virtual device for a target, or something asked of one that it cannot do; the message says which."""


@dataclass(frozen=True)
class Face:
    """The values one target's virtual device answers with; ``sources`` cites each."""

    target: str
    vendor: str
    backend: str
    arch: str
    warp_size: int
    device_name: str
    capability: tuple[int, int]
    gcn_arch: str | None
    total_memory: int
    l2_bytes: int
    sm_count: int
    shared_per_block: int
    regs_per_block: int | None
    max_threads_per_sm: int | None = None
    # scaled_dot_product_attention's backends in the order this target's torch tries them, and the head-dim limits
    # of its cuDNN and flash kernels (harness/intake/virtual_device/sdpa_dispatch.py)
    sdpa_order: tuple[str, ...] = ("flash", "efficient", "math")
    cudnn_head_dim: int = 0
    flash_head_dim: int = 256
    sources: tuple[tuple[str, str], ...] = ()

    def answers(self) -> dict[str, Any]:
        """What the face says, for the records (every value here is cited in ``sources``)."""
        return {
            "device_name": self.device_name,
            "capability": list(self.capability),
            "multi_processor_count": self.sm_count,
            "max_shared_mem": self.shared_per_block,
            "warp_size": self.warp_size,
            "total_memory": self.total_memory,
            "L2_cache_size": self.l2_bytes,
            **({"max_threads_per_multi_processor": self.max_threads_per_sm} if self.max_threads_per_sm else {}),
            **({"gcnArchName": self.gcn_arch} if self.gcn_arch else {}),
            "torch.version": {self.backend: _TOOLKIT[self.backend]},
        }

    def triton_properties(self) -> dict[str, Any]:
        props: dict[str, Any] = {
            "max_shared_mem": self.shared_per_block,
            "multiprocessor_count": self.sm_count,
            "warpSize": self.warp_size,
        }
        if self.regs_per_block is not None:
            props["max_num_regs"] = self.regs_per_block
        if self.backend == "hip":
            props["arch"] = self.arch
        return props


@lru_cache(maxsize=None)
def _catalogue() -> dict[str, Any]:
    doc = yaml.safe_load(FACES.read_text())
    return {"sources": doc["sources"], "faces": doc["faces"]}


def known() -> tuple[str, ...]:
    """The targets that have a virtual device."""
    return tuple(_catalogue()["faces"])


def refusal(targets: tuple[str, ...] | list[str], what: str) -> str:
    """One line refusing ``what`` (``ops:`` or ``compiled:`` entries) for the targets without a virtual device, or
    ``""`` where every one has a face: said where the matrix is read, before any child is started."""
    missing = [t for t in targets if t not in known()]
    if not missing:
        return ""
    return (f"{what} entries cannot be captured for {', '.join(missing)}: no virtual device for "
            f"{'it' if len(missing) == 1 else 'them'} in harness/model/faces.yaml (captures take "
            f"{', '.join(known())}; `harness targets` says so)")  # fmt: skip


def of(target_name: str) -> Face:
    """The face of a catalogue target; :class:`FaceError` for a target without one."""
    from harness.model import targets

    faces = _catalogue()["faces"]
    if target_name not in faces:
        raise FaceError(
            f"no virtual device for target {target_name!r} (harness/model/faces.yaml has {', '.join(faces)}): "
            "its op launches cannot be captured"
        )
    t = targets.get(target_name)
    entry, sources = faces[target_name], _catalogue()["sources"]
    cited = [(k, sources[v["source"]]) for k, v in entry.items()] + list(t.sources)
    value = {k: v["value"] for k, v in entry.items()}
    return Face(
        target=target_name,
        vendor=t.vendor,
        backend=t.backend,
        arch=t.arch,
        warp_size=t.warp_size,
        device_name=value["device_name"],
        capability=(int(value["capability"][0]), int(value["capability"][1])),
        gcn_arch=value.get("gcn_arch"),
        total_memory=int(value["total_memory"]),
        l2_bytes=int(value["l2_bytes"]),
        sm_count=t.sm_count,
        shared_per_block=t.shared_per_block,
        regs_per_block=t.regs_per_sm if t.vendor == "nvidia" else None,
        max_threads_per_sm=int(value["max_threads_per_sm"]) if "max_threads_per_sm" in value else None,
        sdpa_order=tuple(value["sdpa_order"]),
        cudnn_head_dim=int(value.get("cudnn_head_dim", 0)),
        flash_head_dim=int(value["flash_head_dim"]),
        sources=tuple(cited),
    )


_WORN: list[Face] = []


def worn() -> Face | None:
    """The face this process wears, if any."""
    return _WORN[0] if _WORN else None


def wear_from_env() -> Face | None:
    """Wear the face ``HARNESS_FACE`` names (a capture child, a compile worker for one target's op builds)."""
    name = os.environ.get(ENV, "")
    if not name:
        return None
    face = of(name)
    wear(face)
    return face


def wear(face: Face) -> None:
    """Put the face on for the rest of this process (there is no taking it off: a library imported under it keeps
    what it read)."""
    if _WORN:
        if _WORN[0] != face:
            raise FaceError(f"this process already wears {_WORN[0].target}'s face, not {face.target}'s")
        return
    _WORN.append(face)
    _wear_torch(face)
    _wear_triton(face)


class _Properties:
    """What ``torch.cuda.get_device_properties`` returns under a face."""

    def __init__(self, face: Face) -> None:
        self.name = face.device_name
        self.major, self.minor = face.capability
        self.multi_processor_count = face.sm_count
        self.total_memory = face.total_memory
        self.warp_size = face.warp_size
        self.L2_cache_size = face.l2_bytes
        # NVIDIA: 48 KiB without the opt-in (CUDA guide), the opt-in limit is the catalogue's per-block figure
        self.shared_memory_per_block = 49152 if face.vendor == "nvidia" else face.shared_per_block
        self.shared_memory_per_block_optin = face.shared_per_block
        self.is_integrated = False
        # what Inductor's DeviceProperties reads (its split-reduction and RBLOCK heuristics, the kernels' headers);
        # the register file only where the catalogue cites one (NVIDIA's; HIP's figure has no source here)
        if face.max_threads_per_sm is not None:
            self.max_threads_per_multi_processor = face.max_threads_per_sm
        if face.regs_per_block is not None:
            self.regs_per_multiprocessor = face.regs_per_block
        if face.gcn_arch:
            self.gcnArchName = face.gcn_arch

    def __repr__(self) -> str:
        return f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}) [virtual]"


class _Stream:
    cuda_stream = 0
    device = None

    def synchronize(self) -> None:
        return None

    def wait_stream(self, other: Any) -> None:
        return None


class _DeviceContext(contextlib.AbstractContextManager):
    def __init__(self, device: Any = None) -> None:
        self.idx = 0

    def __exit__(self, *exc: Any) -> None:
        return None


def _wear_torch(face: Face) -> None:
    import torch

    cuda, props = torch.cuda, _Properties(face)
    arch = face.arch if face.backend == "hip" else face.arch.replace("_", "")
    answers: dict[str, Callable[..., Any]] = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda device=None: None,
        "get_device_capability": lambda device=None: face.capability,
        "get_device_name": lambda device=None: face.device_name,
        "get_device_properties": lambda device=None: props,
        "synchronize": lambda device=None: None,
        "is_initialized": lambda: True,
        "_lazy_init": lambda: None,
        "init": lambda: None,
        "get_arch_list": lambda: [arch],
        "mem_get_info": lambda device=None: (face.total_memory, face.total_memory),
        "empty_cache": lambda: None,
        "is_bf16_supported": lambda including_emulation=True: True,
        "manual_seed": lambda seed: None,
        "manual_seed_all": lambda seed: None,
        "current_stream": lambda device=None: _Stream(),
        "default_stream": lambda device=None: _Stream(),
        "stream": lambda stream=None: contextlib.nullcontext(),
    }
    for name, answer in answers.items():
        setattr(cuda, name, answer)
    cuda.device = _DeviceContext  # type: ignore[assignment,misc]
    torch.version.cuda = (torch.version.cuda or _TOOLKIT["cuda"]) if face.backend == "cuda" else None  # type: ignore[misc]
    torch.version.hip = _TOOLKIT["hip"] if face.backend == "hip" else None  # type: ignore[attr-defined]
    torch.backends.cuda.is_built = lambda: True  # type: ignore[attr-defined]
    from harness.intake.virtual_device import face_tensors

    face_tensors.enter()
    from harness.intake.inductor import compiled_regions

    compiled_regions.install(face)  # an op's torch.compile regions: compiled by Inductor as on this target, recorded


class _Utils:
    def __init__(self, face: Face) -> None:
        self.face = face

    def get_device_properties(self, device: Any = None) -> dict[str, Any]:
        return self.face.triton_properties()

    def load_binary(self, *args: Any, **kwargs: Any) -> Any:
        raise FaceError(f"nothing runs on {self.face.target}'s virtual device (a kernel binary was loaded)")


class FaceDriver:
    """Triton's active driver under a face: the target, the device and the benchmarker; nothing launches."""

    def __init__(self, face: Face) -> None:
        self.face = face
        self.backend = face.backend
        self.utils = _Utils(face)

    @staticmethod
    def is_active() -> bool:
        return True

    @property
    def launcher_cls(self) -> Any:
        raise FaceError(f"nothing launches on {self.face.target}'s virtual device (a compiled kernel was launched)")

    def get_current_target(self) -> Any:
        from harness.support.tritoncompat import gpu_target

        return gpu_target(self.face.backend, self.face.arch, self.face.warp_size)

    def get_active_torch_device(self) -> Any:
        import torch

        return torch.device("cuda", 0)

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: Any) -> None:
        return None

    def get_current_stream(self, device: Any = None) -> int:
        return 0

    def get_device_interface(self) -> Any:
        import torch

        return torch.cuda

    def get_benchmarker(self) -> Callable[..., Any]:
        from harness.intake.launches.capture import bench_once

        return bench_once

    def get_empty_cache_for_benchmark(self) -> Any:
        import torch

        return torch.empty(1 << 20, dtype=torch.int8, device="cuda")

    def clear_cache(self, cache: Any) -> None:
        return None


def _wear_triton(face: Face) -> None:
    import triton.testing
    from triton.runtime.driver import driver

    from harness.intake.launches.capture import bench_once

    driver.set_active(FaceDriver(face))  # type: ignore[arg-type]
    triton.testing.do_bench = bench_once  # a library's own autotuner may call it by module
    if hasattr(triton.testing, "do_bench_cudagraph"):
        triton.testing.do_bench_cudagraph = bench_once
