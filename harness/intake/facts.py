"""What the matrix reader, the case expansion and the run's items need of a kernel spec, as checked data.

A user's kernel module is Python the harness must run, but not in its own process: a module that hangs, exits,
crashes or replaces ``sys.modules["triton"]`` there takes the harness with it or falsifies every record. So the
harness's process never imports one. A child (:func:`fetch`, on :mod:`harness.intake.child_probe`) imports the
module, builds the :class:`~harness.authoring.spec.KernelSpec`, and reports these facts as JSON; the parent reads
them back field by field (:meth:`SpecFacts.from_json` refuses anything of the wrong type) and works from them
alone. What depends on the matrix's shapes and configs — ``config_ok`` and an autotuner's ``early_config_prune``
— is called by the callback probe's child, which reports each answer (:func:`remember_config_ok`,
:func:`remember_pruned`). Compiles, interpreter checks and GPU runs load the real spec in their workers, which
are children too. The repository's own kernels are the harness's code: their facts are taken in-process.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.authoring.spec_shapes import SpecShapes
from harness.intake import child_probe, loader
from harness.model.kernel_refs import CaptureFailedRef, FileRef, InductorRef, decode

Shape = dict[str, Any]


@dataclass(frozen=True)
class SpecFacts(SpecShapes):
    """A kernel spec as the reader sees it: plain values, the same names as :class:`KernelSpec`'s."""

    ref: str
    name: str
    dims: tuple[str, ...]
    flags: tuple[str, ...]
    dtypes: tuple[str, ...]
    tunables: tuple[str, ...]
    nvidia_configs: tuple[dict[str, Any], ...]
    amd_configs: tuple[dict[str, Any], ...]
    interpret_shapes: tuple[Shape, ...]
    interpret_dtypes: tuple[str, ...] | None
    compile_only: bool
    captured: dict[str, Any] | None
    autotune_listed: bool  # a decorated kernel with its own autotune list
    early_prune: bool  # its autotuner has an early_config_prune
    fn_name: str
    arg_names: tuple[str, ...] | None  # the JITFunction's parameters (None: not a JITFunction)
    per_target_fn: bool  # ``fn`` is a function of the target
    source_hash: str
    trusted: bool = field(default=False, compare=False)  # the repository's own kernel: callbacks run here

    def config_ok(self, shape: Shape, config: dict[str, Any]) -> bool:
        """The spec's ``config_ok`` for this shape and config: called here for the repository's kernels, else the
        answer the callback probe's child reported (it raises as the callback raised)."""
        if self.trusted:
            return bool(loader.load(self.ref).config_ok(dict(shape), dict(config)))
        answer = _CONFIG_OK.get(_key(self.ref, shape, config))
        if answer is None:
            raise RuntimeError(f"config_ok of {self.name} was not asked for shape {shape} and config {config}")
        if isinstance(answer, str):
            raise CallbackRaised(answer)
        return answer

    def pruned(self, shape: Shape, dtype: str, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The configs the autotuner's ``early_config_prune`` keeps (all when it has none)."""
        if not self.early_prune:
            return configs
        if self.trusted:
            from harness.authoring.decorated import prune

            spec = loader.load(self.ref)
            return list(prune(spec.decorated, configs, spec.stand_in_nargs(dict(shape), dtype))[0])
        kept = _PRUNED.get(_key(self.ref, shape, dtype))
        if kept is None:
            raise RuntimeError(f"early_config_prune of {self.name} was not run for shape {shape} and dtype {dtype}")
        return [c for c in configs if _canon(c) in kept]

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _FIELDS}

    @classmethod
    def from_json(cls, data: Any) -> "SpecFacts":
        """The facts a child reported, each field checked for its type: a report that is not facts is refused."""
        if not isinstance(data, dict) or set(data) != set(_FIELDS):
            raise loader.KernelLoadError("the child that imported the kernel reported no facts of it")
        out: dict[str, Any] = {}
        for name, kind in _FIELDS.items():
            value = data[name]
            ok = {
                "str": isinstance(value, str),
                "bool": isinstance(value, bool),
                "strs": isinstance(value, list) and all(isinstance(v, str) for v in value),
                "strs?": value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
                "dicts": isinstance(value, list) and all(isinstance(v, dict) for v in value),
                "dict?": value is None or isinstance(value, dict),
            }[kind]
            if not ok:
                raise loader.KernelLoadError(f"the child's facts of the kernel have a {name} of the wrong type")
            out[name] = tuple(value) if kind in ("strs", "dicts") or (kind == "strs?" and value is not None) else value
        return cls(**out)


class CallbackRaised(Exception):
    """A spec callback raised in the probe's child; ``str()`` is ``Type: message`` as it raised."""


#: field -> kind, for :meth:`SpecFacts.from_json`
_FIELDS = {
    "ref": "str", "name": "str", "dims": "strs", "flags": "strs", "dtypes": "strs", "tunables": "strs",
    "nvidia_configs": "dicts", "amd_configs": "dicts", "interpret_shapes": "dicts", "interpret_dtypes": "strs?",
    "compile_only": "bool", "captured": "dict?", "autotune_listed": "bool", "early_prune": "bool",
    "fn_name": "str", "arg_names": "strs?", "per_target_fn": "bool", "source_hash": "str",
}  # fmt: skip


def of_spec(ref: str, spec: Any) -> SpecFacts:
    """The facts of a loaded spec (in the child, or here for the repository's own kernels)."""
    decorations = spec.decorations
    params = getattr(spec.fn, "arg_names", None)
    return SpecFacts(
        ref=ref,
        name=str(spec.name),
        dims=tuple(map(str, spec.dims)),
        flags=tuple(map(str, spec.flags)),
        dtypes=tuple(map(str, spec.dtypes)),
        tunables=tuple(map(str, spec.tunables)),
        nvidia_configs=tuple(dict(c) for c in spec.nvidia_configs),
        amd_configs=tuple(dict(c) for c in spec.amd_configs),
        interpret_shapes=tuple(spec.normalize_shape(s) for s in spec.interpret_shapes),
        interpret_dtypes=None if spec.interpret_dtypes is None else tuple(spec.interpret_dtypes),
        compile_only=bool(spec.compile_only),
        captured=dict(spec.captured) if spec.captured else None,
        autotune_listed=bool(decorations and decorations.autotune_configs),
        early_prune=bool(decorations is not None and "early_config_prune" in decorations.prune),
        fn_name=str(getattr(spec.fn, "__name__", "?")),
        arg_names=None if params is None else tuple(map(str, params)),
        per_target_fn=spec.fn_of_target is not None,
        source_hash=loader.source_hash(ref),
    )


def _inductor_facts(ref: str, made: InductorRef) -> SpecFacts:
    """A kernel Inductor generated (:mod:`harness.intake.inductor.inductor_ref`); on a GPU each config is checked and timed
    through the compiled function (:mod:`harness.intake.inductor.inductor_spec`)."""
    first = dict(json.loads(made.slots[0].shape)) if made.slots else {}
    return SpecFacts(
        ref=ref, name=made.kernel, dims=tuple(first), flags=(), dtypes=tuple(sorted({s.dtype for s in made.slots})),
        tunables=made.tunables, nvidia_configs=(), amd_configs=(), interpret_shapes=(), interpret_dtypes=(),
        compile_only=False, captured=None, autotune_listed=False, early_prune=False, fn_name=made.kernel,
        arg_names=None, per_target_fn=False, source_hash=made.source_hash,
    )  # fmt: skip


def _failed_capture_facts(ref: str, made: CaptureFailedRef) -> SpecFacts:
    """A compiled entry whose capture failed: nothing to import or build, its cases fail with why."""
    return SpecFacts(
        ref=ref, name=made.entry, dims=(), flags=(), dtypes=(), tunables=(), nvidia_configs=(), amd_configs=(),
        interpret_shapes=(), interpret_dtypes=(), compile_only=True, captured=None, autotune_listed=False,
        early_prune=False, fn_name=made.entry, arg_names=None, per_target_fn=False, source_hash=made.source_hash,
    )  # fmt: skip


def trusted(ref: str) -> bool:
    """The repository's own kernels (``kernels/``): the harness's code, loaded in its own process."""

    location = ref.rpartition(":")[0]
    return location.endswith(".py") and Path(location).resolve().parent == loader.REPO_KERNELS.resolve()


_FACTS: dict[tuple[str, tuple[tuple[str, str], ...]], SpecFacts | str] = {}
_CONFIG_OK: dict[str, bool | str] = {}
_PRUNED: dict[str, set[str]] = {}


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _key(ref: str, *parts: Any) -> str:
    return _canon([ref, *parts])


def remember_config_ok(ref: str, shape: Shape, config: dict[str, Any], answer: bool | str) -> None:
    _CONFIG_OK[_key(ref, shape, config)] = answer


def remember_pruned(ref: str, shape: Shape, dtype: str, kept: list[dict[str, Any]]) -> None:
    _PRUNED[_key(ref, shape, dtype)] = {_canon(c) for c in kept}


def get(ref: str, import_env: tuple[tuple[str, str], ...] = ()) -> SpecFacts:
    """The facts of ``ref``; raises :class:`~harness.intake.loader.KernelLoadError` with the reason in one line."""
    made = decode(ref)
    if isinstance(made, InductorRef):  # Inductor's kernel: its capture said everything, nothing to import
        return _inductor_facts(ref, made)
    if isinstance(made, CaptureFailedRef):
        return _failed_capture_facts(ref, made)
    if trusted(ref):
        if (ref, ()) not in _FACTS:
            _FACTS[(ref, ())] = dataclasses.replace(of_spec(ref, loader.load(ref)), trusted=True)
        return _cached(ref, ())
    if (ref, import_env) not in _FACTS:
        fetch([ref], import_env)
    return _cached(ref, import_env)


def known(ref: str, import_env: tuple[tuple[str, str], ...] = ()) -> bool:
    """Whether :func:`get` answers ``ref`` without a child (its facts, or why it has none, already taken)."""
    return trusted(ref) or isinstance(decode(ref), (InductorRef, CaptureFailedRef)) or (ref, import_env) in _FACTS


def _cached(ref: str, import_env: tuple[tuple[str, str], ...]) -> SpecFacts:
    found = _FACTS[(ref, import_env)]
    if isinstance(found, str):
        raise loader.KernelLoadError(found)
    return found


_CHILD = r"""
from harness.intake import facts, loader
imported()
for i, ref in enumerate(ENTRIES):
    say(i)
    try:
        result(i, facts.of_spec(ref, loader.load(ref)).to_json())
    except loader.KernelLoadError as exc:
        result(i, {"error": str(exc)})
done()
"""


#: a directory one ``harness run`` shares with its pytest-xdist workers (:mod:`harness.cli.run` makes it and removes
#: it): the facts its process took are read there, so a worker does not import the user's modules again (a library
#: such as fla-core costs seconds per import, per worker). It lives for one run only: a module's facts can change
#: with any file it imports, which no key here could see.
SHARED_ENV = "HARNESS_FACTS_SHARED"


def _shared(ref: str, import_env: tuple[tuple[str, str], ...]) -> Path | None:
    where = os.environ.get(SHARED_ENV)
    if not where:
        return None
    return Path(where) / (hashlib.sha256(json.dumps([ref, import_env]).encode()).hexdigest()[:32] + ".json")


def _read_shared(ref: str, import_env: tuple[tuple[str, str], ...]) -> bool:
    """Whether this run's process had the facts of ``ref`` (kept here when it had)."""
    path = _shared(ref, import_env)
    try:
        reported = json.loads(path.read_text()) if path is not None else None
    except (OSError, ValueError):
        return False
    if isinstance(reported, dict) and set(reported) == {"error"} and isinstance(reported["error"], str):
        _FACTS[(ref, import_env)] = reported["error"]
        return True
    try:
        _FACTS[(ref, import_env)] = SpecFacts.from_json(reported)
    except loader.KernelLoadError:
        return False
    return True


def _write_shared(ref: str, import_env: tuple[tuple[str, str], ...]) -> None:
    path, found = _shared(ref, import_env), _FACTS.get((ref, import_env))
    if path is None or found is None:
        return
    text = json.dumps({"error": found} if isinstance(found, str) else found.to_json())
    try:
        partial = path.with_suffix(f".{os.getpid()}.part")
        partial.write_text(text)
        os.replace(partial, path)  # whole or absent: a worker reading beside it never sees half a file
    except OSError:
        pass  # a worker then imports the module itself, as without the share


def fetch(refs: list[str], import_env: tuple[tuple[str, str], ...] = ()) -> None:
    """Import ``refs`` in one child and keep what it reports of each (facts, or the one-line reason it has none).

    Under a run's share, one process at a time fetches: xdist's workers collect the same matrix at the same moment,
    and the second reads what the first fetched instead of importing the same modules beside it."""
    todo = [r for r in dict.fromkeys(refs) if not known(r, import_env)]
    if not todo:
        return
    where = os.environ.get(SHARED_ENV)
    if not where or not Path(where).is_dir():
        _fetch(todo, import_env)
        return
    with open(Path(where) / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            _fetch([r for r in todo if not _read_shared(r, import_env)], import_env)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _fetch(todo: list[str], import_env: tuple[tuple[str, str], ...]) -> None:
    if not todo:
        return
    got = child_probe.run(_CHILD, todo, import_env, call_limit="HARNESS_IMPORT_TIMEOUT_S")
    for i, ref in enumerate(todo):
        reported = got.results.get(i)
        if isinstance(reported, dict) and set(reported) == {"error"} and isinstance(reported["error"], str):
            _FACTS[(ref, import_env)] = reported["error"]
        elif reported is not None:
            try:
                _FACTS[(ref, import_env)] = SpecFacts.from_json(reported)
            except loader.KernelLoadError as exc:
                _FACTS[(ref, import_env)] = str(exc)
        elif got.last is not None and int(got.last[0]) == i:
            _FACTS[(ref, import_env)] = _ended(ref, got)
        _write_shared(ref, import_env)
        # a ref the child never reached (an earlier one ended it) is fetched again on its own when asked for


def _ended(ref: str, got: child_probe.Outcome) -> str:
    """Why importing ``ref`` gave no facts: the child hung, was killed by a signal or ended itself."""
    from harness.support.settings import timeout_s

    made = decode(ref)
    location = made.location if isinstance(made, FileRef) else "the op's modules"
    if got.timed_out:
        return f"importing {location} did not finish within {timeout_s('HARNESS_IMPORT_TIMEOUT_S'):g} s (it hangs at import?)"
    if got.returncode < 0:
        return f"importing {location} killed the process ({signal.Signals(-got.returncode).name})"
    if got.returncode == 0:
        return (
            f"importing {location} ended the process (exit code 0) before it finished: it calls sys.exit or "
            "os._exit at import"
        )
    return f"cannot import kernel {location}: exit code {got.returncode}" + (
        f": {got.stderr_tail}" if got.stderr_tail else ""
    )
