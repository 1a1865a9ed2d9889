"""A kernel TorchInductor generated, as a spec a GPU worker checks and times: one config of it is the whole compiled
function run with that kernel held to that config, against the function run eagerly. For a kernel of an ``op:``'s
``torch.compile`` regions, what runs is the op as shipped (its regions compiled by its own ``torch.compile`` with
its own options), against its entry's reference or, without one, the op with its ``torch.compile`` ignored.

Only a GPU worker loads this (:func:`harness.intake.loader.load`); the build stage never does. The function (or
the ``nn.Module`` its factory makes, once per shape and dtype, its weights seeded) is compiled for real with
``torch.compile`` on this GPU, with the options the capture used (:func:`harness.intake.inductor.inductor_face.
compile_options`: the named policies that a capture can follow on a device too) and Inductor's compile threads at
one, so every kernel's autotuner lives in this process. ``CachingAutotuner.run`` is wrapped once per process:
for the kernel a check or timing holds (by Inductor's ``kernel_name``), the launcher of the wanted config is the
only one left, so Inductor never benchmarks it away; every other kernel of the graph keeps Inductor's own choice.

What is timed is the compiled function, Python wrapper included: the time a user of that function sees with that
kernel at that config. A config of the capture that Inductor on this GPU does not list, or a kernel this GPU's graph
does not have, is that config's error, naming it: the capture and the GPU disagree (docs/performance.md keeps the
parity runs). The binary each held launcher holds is offered as the spec's ``fn.device_caches`` so launch parity
compares it, by sha256, with the binary the build stage made; for that the kernels launch through Triton's own
launcher (``use_static_cuda_launcher`` off: the launch path, not the binary, differs from Inductor's default).
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Mapping, cast

from harness.authoring.decorated import config_dict
from harness.authoring.spec import KernelSpec, Shape
from harness.intake.importing import import_attr
from harness.intake.inductor import inductor_face
from harness.intake.inductor.inductor_ref import InductorRef
from harness.support import launch_marks, torchcompat

_LOCK = threading.Lock()
_HELD: dict[str, dict[str, Any]] = {}  # kernel name -> the config its launches are held to
_RAN: set[str] = set()  # the held kernels the last call launched
_WRAPPED: list[bool] = []


def _launched(name: str) -> Any:
    """What stands in for the spec's ``fn``: a ``JITFunction`` (the spec takes no other kind) whose ``device_caches``
    hold every binary a held launcher of this kernel ran, so launch parity finds the one a launch added."""
    from triton.runtime.jit import JITFunction

    class Launched(JITFunction):  # type: ignore[misc]
        def __init__(self) -> None:  # noqa: D107 - nothing of a JIT function's own: no source, never compiled here
            self.binaries: dict[int, Any] = {}
            self.__name__ = name

        def __repr__(self) -> str:
            return f"<binaries Inductor's held launchers of {name} ran>"

        @property
        def device_caches(self) -> dict[int, tuple[dict[int, Any]]]:  # type: ignore[override]
            return {0: (dict(self.binaries),)}

    return Launched()


_LAUNCHED: dict[str, Any] = {}


def _wrap_run() -> None:
    """Hold each kernel named in ``_HELD`` to its config (once per process), under the policies a device can follow
    as the capture did (:data:`harness.model.inductor_policies.POLICIES`): epilogue fusion and padding not decided
    by benchmark; and Inductor's compile in this process, where its autotuners can be held."""
    if _WRAPPED:
        return
    CachingAutotuner = torchcompat.triton_heuristics().CachingAutotuner
    # as the capture set it: one thread, Inductor's caches off (a graph or kernel cached by an earlier run, under
    # other options or another source path, is not what this build is held against), the config-setting policies
    from harness.model.inductor_policies import SETTINGS

    torchcompat.set_inductor_config(SETTINGS)
    # an op's regions compile with the op's own options: what a compiled entry passes as options is set here too
    # (CUDA graphs off, as captured; Triton's own launcher, whose binary launch parity sees)
    torchcompat.set_inductor_config({"triton.cudagraphs": False, "use_static_cuda_launcher": False}, where_present=True)

    original = CachingAutotuner.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = str(self.inductor_meta.get("kernel_name") or getattr(self.fn, "__name__", ""))
        if "_harness_launchers" not in self.__dict__:  # its first launch: every config Inductor listed, compiled
            if not self.launchers:
                self.precompile()
            self._harness_launchers = list(self.launchers)
        wanted = _HELD.get(name)
        if wanted is not None:
            # found once per config, its binary read once: this runs on every launch a timing makes
            found = self.__dict__.setdefault("_harness_held_for", {})
            key = repr(sorted(wanted.items()))
            if key not in found:
                chosen = [la for la in self._harness_launchers if config_dict(la.config) == wanted]
                if not chosen and self.inductor_meta.get("coordinate_descent_tuning"):
                    # a coordinate-descent candidate: built as Inductor's own tuner builds one it tries
                    chosen = [self._precompile_config(_as_config(wanted)).make_launcher()]
                if not chosen:
                    listed = ", ".join(str(config_dict(la.config)) for la in self._harness_launchers)
                    raise LookupError(f"Inductor on this GPU does not list {wanted} for {name} (it lists {listed})")
                found[key] = chosen[:1]
                binary = _binary(chosen[0], name, int(self.triton_meta.get("device", 0) or 0))
                if binary is not None and name in _LAUNCHED:
                    _LAUNCHED[name].binaries.setdefault(binary.hash, binary)
            _use(self, found[key], held=True)
            _RAN.add(name)
        elif self.__dict__.get("_harness_held"):  # held for another case before: Inductor's own choice again
            _use(self, self.__dict__.get("_harness_winner") or list(self._harness_launchers), held=False)
        # an event pair around the launch while the worker splits a call's device time (harness.device.graph_time)
        out = launch_marks.bracket(name, lambda: original(self, *args, **kwargs))
        if wanted is None and len(self.launchers) == 1:
            self._harness_winner = list(self.launchers)  # what Inductor's autotuner kept
        return out

    torchcompat.replace_autotuner_methods(run=run)
    _WRAPPED.append(True)


def _as_config(wanted: Mapping[str, Any]) -> Any:
    """A ``triton.Config`` of a config's plain form (its constexprs, then the launch options Inductor sets)."""
    import triton

    options = ("num_warps", "num_stages", "num_ctas", "maxnreg")
    kwargs = {k: v for k, v in wanted.items() if k not in options}
    return triton.Config(kwargs, **{k: v for k, v in wanted.items() if k in options})


def _binary(launcher: Any, name: str, device: int) -> Any:
    """The binary a launcher runs, as launch parity reads a JIT kernel (``hash``, ``asm``): its ``bin`` where the
    launcher keeps one, else the files Triton's compile wrote in Inductor's Triton cache folder under the launcher's
    ``cache_hash`` (torch 2.11's launchers keep only that: the folder's name, or Triton's hash of it). None where
    neither is found: parity is then "not observed", never a failed launch."""
    from pathlib import Path
    from types import SimpleNamespace

    held = getattr(launcher, "bin", None)
    if held is not None and getattr(held, "asm", None):
        return SimpleNamespace(hash=str(getattr(held, "hash", "") or id(held)), asm=held.asm)
    key = str(getattr(launcher, "cache_hash", "") or "")
    if not key:
        return None
    try:
        from harness.support.torchcompat import triton_cache_dir, triton_hash_to_path_key

        root = Path(triton_cache_dir(device))
        folders = [root / key]
        if all(c in "0123456789abcdef" for c in key):
            folders.append(root / triton_hash_to_path_key(key))
        for folder in folders:
            asm: dict[str, Any] = {}
            for kind in ("cubin", "hsaco", "ttir", "ttgir", "llir", "ptx", "amdgcn"):
                path = folder / f"{name}.{kind}"
                if path.is_file():
                    asm[kind] = path.read_bytes() if kind in ("cubin", "hsaco") else path.read_text()
            if asm:
                meta = folder / f"{name}.json"  # Triton's own cache key, as the static build records it
                hashed = json.loads(meta.read_text()).get("hash") if meta.is_file() else None
                return SimpleNamespace(hash=str(hashed or key), asm=asm)
    except (ImportError, OSError, ValueError):
        return None
    return None


def _use(autotuner: Any, launchers: list[Any], held: bool) -> None:
    if autotuner.launchers != launchers:
        torchcompat.use_launchers(autotuner, launchers)  # torch 2.13's fast path would keep the previous one
    autotuner._harness_held = held


def spec_for(made: InductorRef) -> KernelSpec:
    """The spec of one Inductor kernel: its configs run through the compiled function, eager as the reference."""
    import torch

    from harness.support import torchcompat

    inductor_config = torchcompat.inductor_config()
    fn: Any = import_attr(made.fn)
    make_inputs: Any = import_attr(made.inputs)
    compiled: dict[Any, tuple[Callable[..., Any], Callable[..., Any]]] = {}

    def pair(args: tuple, shape: Mapping[str, Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """(eager, compiled) for this shape and these inputs' dtypes, made once."""
        key = (tuple(sorted(shape.items())), tuple(str(getattr(a, "dtype", type(a))) for a in args))
        if made.op and key not in compiled:  # the op as shipped: its regions compiled by its own torch.compile
            compiled.clear()
            torchcompat.dynamo().reset()  # each shape compiled for itself, as the capture's were
            compiled[key] = (_op_reference(fn, made.reference), fn)
        if key not in compiled:
            eager: Any = fn
            if made.factory:  # as the capture made it: the entry's dtype the default, on the device, seeded
                dtype = next((a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()), None)
                before = torch.get_default_dtype()
                torch.manual_seed(0)
                torch.set_default_dtype(dtype or before)
                try:
                    with torch.device("cuda"):
                        eager = fn(dict(shape), _harness_dtype(dtype))
                finally:
                    torch.set_default_dtype(before)
            mode = None if made.mode == "default" else made.mode
            options = inductor_face.compile_options(mode, dict(made.options))
            if hasattr(inductor_config, "use_static_cuda_launcher"):  # Triton's own launcher: its binary is seen
                options["use_static_cuda_launcher"] = False
            compiled[key] = (eager, torch.compile(eager, fullgraph=True, dynamic=made.dynamic, options=options))
        return compiled[key]

    def launch(args: tuple, shape: Mapping[str, Any], config: Mapping[str, Any]) -> Any:
        with _LOCK:
            _HELD[made.kernel] = dict(config)
            _RAN.discard(made.kernel)
            try:
                with torch.no_grad():
                    out = _output(pair(args, shape)[1](*args))
            finally:
                _HELD.pop(made.kernel, None)
            if made.kernel not in _RAN:  # the GPU's graph lacks the kernel: nothing of this config ran
                raise LookupError(
                    f"Inductor's graph on this GPU does not launch {made.kernel} (a choice it makes by timing, such "
                    "as max-autotune's, differs from the capture's policy): this config cannot be checked or timed"
                )
            return out

    _wrap_run()  # before anything is compiled: the policies are Inductor's config when it compiles

    def reference(args: tuple, shape: Mapping[str, Any]) -> Any:
        with torch.no_grad():
            return _output(pair(args, shape)[0](*args))

    def graph_call(args: tuple, shape: Shape) -> Callable[[], Any]:
        compiled_fn = pair(args, shape)[1]

        def call() -> Any:
            with torch.no_grad():
                return compiled_fn(*args)

        return call

    dims = tuple(k for k, _ in json.loads(made.slots[0].shape)) if made.slots else ()
    _LAUNCHED.setdefault(made.kernel, _launched(made.kernel))
    return KernelSpec(
        name=made.kernel,
        fn=_LAUNCHED[made.kernel],
        dims=dims,
        dtypes=("fp16", "bf16", "fp32"),
        tunables=made.tunables,
        runtime_args=lambda shape, dtype: {},
        nvidia_configs=(),
        amd_configs=(),
        make_inputs=make_inputs,
        launch=launch,
        reference=reference,
        baselines={"eager": reference},
        graph_call=graph_call,
    )


def _op_reference(op: Callable[..., Any], reference: str) -> Callable[..., Any]:
    """An op's reference: the one its entry names, else the op with every ``torch.compile`` in it ignored (torch's
    ``force_eager`` stance: its regions run eagerly, what was compiled before left unused)."""
    if reference:
        return cast(Callable[..., Any], import_attr(reference))
    import torch

    def eager(*args: Any) -> Any:
        with torch.compiler.set_stance("force_eager"):
            return op(*args)

    return eager


def _output(result: Any) -> Any:
    return tuple(result) if isinstance(result, list) else result


def _harness_dtype(dtype: Any) -> str:
    import torch

    return {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}.get(dtype, "fp32")
