"""The run matrix: YAML in, validated plain dataclasses out.

Validation happens before anything compiles and reports every problem it finds,
each as ``file:line: message``. Triton drops unknown compile options without a
word, so option names are checked here against the backends of the matrix's
targets.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.intake import loader
from harness.matrix.kernel_entries import MAX_TIMEOUT_S, KernelEntry, entries_of
from harness.matrix.known import KnownFailure, parse_known_failures
from harness.model import targets
from harness.model.environments import DEFAULT_ENV, Environment, parse_environments
from harness.support import safe_files, yamlpos
from harness.support.checking import Checker, MatrixError, Problem, is_a, suggest

TOP_KEYS = {
    "name": str,
    "description": str,
    "triton": list,
    "targets": list,
    "kernels": dict,
    "known_failures": list,
    "timeout_s": (int, float),
    "seed": int,
    "kernels_dir": str,
    "environments": dict,
    "compiled": dict,  # functions torch.compile turns into TorchInductor's kernels (harness.matrix.compiled_entries)
}
_VERSION_RE = re.compile(r"\d+\.\d+(\.\d+)?([.+-]\w+)*")  # fullmatch: no trailing newline passes


@dataclass(frozen=True)
class Matrix:
    path: str
    name: str
    description: str
    triton: tuple[str, ...]
    targets: tuple[str, ...]
    kernels: tuple[KernelEntry, ...]
    timeout_s: float
    seed: int
    content_hash: str
    environments: tuple[tuple[str, tuple[Environment, ...]], ...] = ()  # per target, overriding the catalogue
    known_failures: tuple[KnownFailure, ...] = ()

    def environments_for(self, target: str, entry: KernelEntry | None = None) -> tuple[Environment, ...]:
        """The compile environments ``target`` is built under: the kernel's own where it names the target, else
        the matrix's, else Triton's defaults alone."""
        for name, envs in (entry.environments if entry is not None else ()) + self.environments:
            if name == target:
                return envs
        return (DEFAULT_ENV,)  # the catalogue's named environments are opt-in: a matrix sweeps them by name


def _probe_together(kernels: dict[str, Any], kernels_dir: Path | None, base_dir: Path) -> None:
    """Import every user spec the matrix names in one child and keep its facts (a library such as fla-core takes
    ~10 s to import: once, not once per entry); an entry whose import failed says why when it is read."""
    from harness.intake import facts

    refs = []
    for name, entry in kernels.items():
        if not isinstance(entry, dict) or entry.get("import_env") or "op" in entry or "inputs" in entry:
            continue  # fetched with its own variables, or captured (harness.intake.launches.op_probe)
        source = entry.get("source")
        try:
            refs.append(loader.resolve(str(name), source if isinstance(source, str) else None, kernels_dir, base_dir))
        except loader.KernelLoadError:
            pass
    facts.fetch(refs)


def _capture_together(chk: Checker, kernels: dict[str, Any], targets: tuple[str, ...], base_dir: Path) -> None:
    """Capture every ``op:`` entry for each target in one child per face (a library and torch imported once per
    target, not once per op), then read every captured launch's spec facts in one child per face; the entries are
    then read one by one from what these children reported. A malformed entry is left to its own reading, which
    says what is wrong with it."""
    from harness.intake import facts
    from harness.matrix import kernel_entries, ops_entries

    scratch = Checker(chk.file, chk.doc)  # problems are said when each entry is read
    requests = []
    ops_of: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for name, entry in kernels.items():
        if not isinstance(entry, dict) or "op" not in entry:
            continue
        path = ("kernels", name)
        import_env = kernel_entries.import_env_of(scratch, entry.get("import_env", {}), path + ("import_env",))
        request = ops_entries.op_request(scratch, str(name), entry, path, base_dir, targets)
        if import_env is None or request is None:
            continue
        requests.append((request, import_env))
        ops_of.append((name, import_env))
    if not requests:
        return
    ops_entries.capture_together(requests)
    by_face: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for name, import_env in ops_of:
        entry = kernels[name]
        for made in ops_entries.op_refs(scratch, str(name), entry, ("kernels", name), base_dir, import_env, targets):
            by_face.setdefault(kernel_entries.face_env_of(import_env, made.first_face), []).append(made.ref)
    for env, refs in by_face.items():
        facts.fetch(refs, env)


def _check_callbacks(
    chk: Checker, entries: list[KernelEntry], target_names: list[str], yaml_names: dict[str, str]
) -> None:
    """The specs' callbacks, first in a child (a hang, crash or exit is one line: :mod:`harness.intake.callback_probe`),
    then ``config_ok`` here, where what it raises is reported with the shape and config."""
    from harness.intake import callback_probe, facts

    groups: dict[tuple[tuple[str, str], ...], list[callback_probe.Probe]] = {}
    entries = [e for e in entries if not e.launched]  # a captured op's launches were probed per target already
    for e in entries:
        groups.setdefault(e.import_env, []).append(
            callback_probe.Probe(
                e.name,
                e.ref,
                tuple(json.dumps(dict(s)) for s in e.shapes),
                tuple(json.dumps(c.as_dict()) for c in e.configs),
                e.dtypes,
                tuple(target_names),
            )
        )
    for import_env, probes in groups.items():
        name, why = callback_probe.check(probes, import_env)
        if why:
            chk.add(("kernels", yaml_names.get(name, name)), f"{name}: {why}")
            return
    for e in entries:
        spec = facts.get(e.ref, e.import_env)
        for i, shape in enumerate(e.shapes):
            for config in e.configs:
                try:
                    spec.config_ok(dict(shape), config.as_dict())
                except Exception as exc:  # noqa: BLE001 - the spec's own code: its failure is this entry's error
                    said = str(exc) if isinstance(exc, facts.CallbackRaised) else f"{type(exc).__name__}: {exc}"
                    chk.add(
                        ("kernels", yaml_names.get(e.name, e.name), "shapes", i),
                        f"{spec.name}.config_ok raised {said} for shape {dict(shape)} and config {config.as_dict()}",
                    )
                    return


def parse(path: str | Path, text: str | None = None, targets: Sequence[str] | None = None) -> Matrix:
    """Read and validate a matrix file; raises :class:`MatrixError` listing every problem. ``targets`` (a run's
    ``--targets``): the targets its ``compiled:`` and ``op:`` entries are captured for, in place of the matrix's."""
    file = str(path)
    if text is None and Path(path).suffix == ".py":
        raise MatrixError(
            [Problem(file, 1, f"a Python file, not a matrix (YAML): `harness init {path}` writes a matrix that names "
                     "the KernelSpec or the op in it (docs/bring-your-kernel.md)")]
        )  # fmt: skip
    try:
        if text is None:
            try:  # a regular file of bounded size, checked before a byte is read (a FIFO or /dev/zero never hangs)
                data = safe_files.read_bytes(Path(path), yamlpos.MAX_BYTES, "matrix")
            except safe_files.InputFileError as exc:
                raise MatrixError([Problem(file, 0, str(exc).removeprefix(f"{path}: "))]) from None
            text = yamlpos.decode(data)
        doc = yamlpos.load(text)
    except yamlpos.YamlError as exc:
        raise MatrixError([Problem(file, exc.line, exc.message)]) from None
    try:
        return _validate(file, text, doc, tuple(targets) if targets else None)
    except MatrixError:
        raise
    except Exception as exc:  # noqa: BLE001 - a safety net: bad input is an error line, never a traceback
        raise MatrixError(
            [Problem(file, 1, f"cannot validate this matrix: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")]
        ) from None


def _validate(file: str, text: str, doc: yamlpos.Located, run_targets: tuple[str, ...] | None = None) -> Matrix:
    chk = Checker(file, doc)
    data = doc.value
    if not isinstance(data, dict):
        chk.add((), "a matrix must be a mapping with name, targets and kernels")
        raise MatrixError(chk.problems)
    # top-level keys starting with "x-" hold YAML anchors for merge keys (<<: *name) and are otherwise ignored
    chk.keys({k: v for k, v in data.items() if not str(k).startswith("x-")}, (), TOP_KEYS, "matrix")
    for required in ("name", "targets", "kernels"):
        if required not in data and not (required == "kernels" and "compiled" in data):
            chk.add(
                (), f"matrix lacks required field {required!r}" + (" (or compiled)" if required == "kernels" else "")
            )
    cat = targets.catalogue()
    target_names: list[Any] = data["targets"] if isinstance(data.get("targets"), list) else []
    if isinstance(data.get("targets"), list) and not target_names:
        chk.add(("targets",), f"targets must name at least one target (known: {', '.join(targets.catalogue())})")
    for i, t in enumerate(target_names):
        if not isinstance(t, str):
            chk.add(("targets", i), f"a target is a catalogue name (a string), got {type(t).__name__} {t!r}")
            continue
        if t not in cat:
            chk.add(("targets", i), f"unknown target {t!r} (known: {', '.join(cat)}){suggest(t, cat)}")
        elif t in target_names[:i]:  # a handful of targets: quadratic is nothing here
            chk.add(("targets", i), f"target {t!r} is listed twice (two records would share one id)")
    target_names = [t for t in target_names if isinstance(t, str)]
    backends = {cat[t].backend for t in target_names if t in cat} or {"cuda", "hip"}
    versions = data.get("triton", ["installed"]) if isinstance(data.get("triton", []), list) else []
    for i, v in enumerate(versions):
        if not isinstance(v, str) or not (v == "installed" or _VERSION_RE.fullmatch(v)):
            chk.add(("triton", i), f'triton version must be a string like "3.6.0" or "installed", got {v!r}')
    timeout = data.get("timeout_s", 300)
    if is_a(timeout, (int, float)) and not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_S):
        chk.add(("timeout_s",), f"timeout_s must be a number of seconds in (0, {MAX_TIMEOUT_S}], got {timeout!r}")
        timeout = 300
    known = parse_known_failures(chk, data.get("known_failures"))
    backend_of = {t: cat[t].backend for t in target_names if t in cat}
    named = {t: cat[t].named_environments for t in backend_of}
    environments = (
        parse_environments(chk, data["environments"], target_names, backend_of, named)
        if isinstance(data.get("environments"), dict)
        else ()
    )
    kdir = data.get("kernels_dir")
    if isinstance(kdir, str):
        kernels_dir: Path | None = (Path(file).parent / kdir).resolve()
    else:
        # a matrix in <repo>/matrices/ uses <repo>/kernels/, whether or not the harness is installed from there
        sibling = Path(file).resolve().parent.parent / "kernels"
        kernels_dir = sibling if sibling.is_dir() else None
    entries = []
    yaml_names: dict[str, str] = {}  # entry name -> the kernels: key it came from (an op gives several)
    known_targets = tuple(t for t in target_names if isinstance(t, str) and t in cat)
    if run_targets:  # the run's own targets: its captures are made for them, or it would have no case there
        known_targets = tuple(t for t in run_targets if t in cat)
    if isinstance(data.get("kernels"), dict):
        if not data["kernels"]:
            chk.add(("kernels",), "matrix has no kernels")
        _probe_together(data["kernels"], kernels_dir, Path(file).resolve().parent)
        _capture_together(chk, data["kernels"], known_targets, Path(file).resolve().parent)
        seen_names: set[str] = set()
        for name, entry in data["kernels"].items():
            if str(name) in seen_names:  # YAML keys 1 and "1": one name for the harness
                chk.add(("kernels", name), f"kernel {str(name)!r} is named twice")
                continue
            seen_names.add(str(name))
            made = entries_of(
                chk,
                str(name),
                entry,
                backends,
                float(timeout) if is_a(timeout, (int, float)) else 300.0,
                kernels_dir,
                Path(file).resolve().parent,
                known_targets,
            )
            own = entry.get("environments") if isinstance(entry, dict) else None
            if isinstance(own, dict):  # this kernel's sweep, checked as the matrix's is
                at = ("kernels", name, "environments")
                swept = parse_environments(chk, own, target_names, backend_of, named, at)
                made = [dataclasses.replace(e, environments=swept) for e in made]
            yaml_names.update({e.name: str(name) for e in made})
            entries += made
    if "compiled" in data and not chk.problems:  # Inductor is run only for a matrix that is otherwise sound
        from harness.matrix import compiled_entries

        seconds = float(timeout) if is_a(timeout, (int, float)) else 300.0
        made = compiled_entries.kernel_entries(
            chk, data["compiled"], known_targets, seconds, Path(file).resolve().parent
        )
        for e in made:
            if e.name in yaml_names:
                chk.add(("compiled", e.name.partition(".")[0]), f"compiled kernel {e.name} is also a kernels: entry")
        entries += made
    if chk.problems:
        raise MatrixError(chk.problems)
    _check_callbacks(chk, entries, target_names, yaml_names)
    if chk.problems:
        raise MatrixError(chk.problems)
    return Matrix(
        path=file,
        name=str(data["name"]),
        description=str(data.get("description", "")),
        triton=tuple(versions) or ("installed",),
        targets=tuple(target_names),
        kernels=tuple(entries),
        timeout_s=float(timeout),
        seed=int(data.get("seed", 0)),
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        environments=environments,
        known_failures=known,
    )
