"""Finding and loading kernel specs.

A kernel is named in a matrix either by the name of a file in the repository's
``kernels/`` directory (``matmul``), or by ``module:attribute`` for a user's own
importable spec (``mypkg.kernels.rmsnorm:SPEC``), or by ``path/to/file.py:SPEC``.
Repository kernel files are loaded by path under a private module name, so no
top-level package called ``kernels`` is ever imported or installed.

:func:`load` imports a user's module, so the harness's own process calls it only for the repository's kernels;
for any other it runs in a child (:mod:`harness.intake.facts`, the probes, the workers).
"""

from __future__ import annotations

import hashlib
import sys
from functools import lru_cache
from pathlib import Path

from harness.authoring.spec import KernelSpec
from harness.intake.importing import KernelLoadError, import_attr


def _bundled(name: str) -> Path:
    """The repository's ``kernels/`` or ``matrices/``: beside ``harness/`` in a checkout, inside it as
    ``harness/_bundled/`` in an installed wheel."""
    here = Path(__file__).resolve().parents[1]  # harness/
    return here.parent / name if (here.parent / name).is_dir() else here / "_bundled" / name


#: the repository's kernels/ directory (harness/ and kernels/ are siblings in a checkout).
REPO_KERNELS = _bundled("kernels")
REPO_MATRICES = _bundled("matrices")


def resolve(name: str, source: str | None, kernels_dir: Path | None = None, base_dir: Path | None = None) -> str:
    """Canonical reference for a matrix entry: ``/abs/file.py:ATTR`` or ``module:ATTR``.

    A relative ``file.py`` is taken relative to ``base_dir`` (the matrix file's folder), as a
    path written in a file is read relative to that file; without one, the working directory.
    """
    if source is None:
        if not name.isidentifier():  # a name is a file in kernels/, never a path: 'source:' names others
            raise KernelLoadError(
                f"kernel name {name!r} is not a plain name of a file in kernels/: "
                "name other files with 'source: path/to/file.py:SPEC'"
            )
        base = kernels_dir or REPO_KERNELS
        path = (base / f"{name}.py").resolve()
        if not path.is_file():
            known = sorted(p.stem for p in base.glob("*.py") if not p.stem.startswith("_"))
            raise KernelLoadError(f"unknown kernel {name!r} (no {path.name} in {base}; known: {', '.join(known)})")
        return f"{path}:SPEC"
    location, sep, attr = source.rpartition(":")
    if not sep or not location or not attr:
        raise KernelLoadError(f"kernel source {source!r} must be 'module:ATTRIBUTE' or 'file.py:ATTRIBUTE'")
    if location.endswith(".py"):
        path = Path(location)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        return f"{path.resolve()}:{attr}"
    return source


@lru_cache(maxsize=None)
def load(ref: str) -> KernelSpec:
    """The KernelSpec a reference names: a spec file's or module's attribute, or a kernel captured from an op
    (:mod:`harness.intake.launches.ops`)."""
    from harness.model.kernel_refs import CaptureFailedRef, InductorRef, OpRef, decode

    made = decode(ref)
    if isinstance(made, InductorRef):  # Inductor's kernel, on a GPU worker: its configs through the compiled function
        from harness.intake.inductor import inductor_spec

        return inductor_spec.spec_for(made)
    if isinstance(made, OpRef):
        from harness.intake.launches import ops

        try:
            return ops.spec_for(made)
        except KernelLoadError:
            raise
        except Exception as exc:  # noqa: BLE001 - capture runs the library's code: said in one line
            raise KernelLoadError(f"cannot capture the op's kernel: {type(exc).__name__}: {exc}") from None
    if isinstance(made, CaptureFailedRef):
        raise KernelLoadError(f"compiled entry {made.entry} was not captured: nothing to load")
    location, attr = made.location, made.attr
    try:
        obj = import_attr(ref)
    except KernelLoadError as exc:
        if "has no attribute" not in str(exc):
            raise
        obj = None
    if not isinstance(obj, KernelSpec):
        raise KernelLoadError(f"{location} has no KernelSpec named {attr!r}")
    return obj


def import_timeout_s() -> float:
    """``HARNESS_IMPORT_TIMEOUT_S`` (:mod:`harness.support.settings`: a value that is no number of seconds is an
    error, checked by the command line before a matrix is read). User modules are imported only in children
    (:mod:`harness.intake.facts`), each import within this limit."""
    from harness.support.settings import timeout_s

    return timeout_s("HARNESS_IMPORT_TIMEOUT_S")


def _module_file(name: str) -> Path | None:
    """The file of module ``name``, found along ``sys.path`` without importing anything (``importlib.util.find_spec``
    of ``a.b`` imports ``a``: a user's package must never run in the harness's process)."""
    from importlib.machinery import PathFinder

    found = None
    search: list[str] | None = None
    parts = name.split(".")
    try:
        for i in range(len(parts)):
            found = PathFinder.find_spec(".".join(parts[: i + 1]), search)
            if found is None:
                return None
            search = list(found.submodule_search_locations or [])
    except (ImportError, ValueError, KeyError):  # KeyError: a namespace package's path asks for its parent module
        return None
    origin = getattr(found, "origin", None) if found else None
    return Path(origin).resolve() if origin and origin.endswith(".py") else None


def _imported_names(path: Path) -> list[str]:
    """Absolute module names a Python file imports (statically, from its syntax tree)."""
    import ast

    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
    return names


def _outside_user_code(path: Path) -> bool:
    """Installed packages and the standard library: their versions are recorded, their files not hashed."""
    parts = set(path.parts)
    return "site-packages" in parts or "dist-packages" in parts or path.is_relative_to(Path(sys.base_prefix).resolve())


def kernel_files(ref: str) -> list[Path]:
    """The spec's file and every module of the user's own code it imports, directly or not.

    Found from import statements (no module is executed), so the same tree always gives the
    same list; the harness's own modules and installed packages are left out. The scan is
    cached per process and spec-file version (every case of a kernel asks for it).
    """
    from harness.model.kernel_refs import CaptureFailedRef, FileRef, InductorRef, decode

    made = decode(ref)
    if not isinstance(made, FileRef):  # an op's or Inductor's kernel: the user's modules it was captured from
        if isinstance(made, CaptureFailedRef):
            return kernel_files(made.fn)
        parts = [made.fn, made.inputs] if isinstance(made, InductorRef) else made.files
        found: list[Path] = []
        for part in parts:
            found += [p for p in kernel_files(part) if p not in found]
        return found
    try:
        stamp = Path(made.location).stat().st_mtime_ns if made.is_path else 0
    except OSError:
        stamp = -1
    return list(_kernel_files(ref, stamp))


@lru_cache(maxsize=None)
def _kernel_files(ref: str, stamp: int) -> tuple[Path, ...]:
    location = ref.rpartition(":")[0]
    first = Path(location).resolve() if location.endswith(".py") else _module_file(location)
    if first is None:
        return ()
    own = Path(__file__).resolve().parents[1]  # the harness's own files are never a kernel's
    extra_path = [str(first.parent)] if location.endswith(".py") else []
    files, todo = [first], [first]
    sys.path[:0] = extra_path
    try:
        while todo:
            for name in _imported_names(todo.pop()):
                found = _module_file(name)
                if found and found not in files and not found.is_relative_to(own) and not _outside_user_code(found):
                    files.append(found)
                    todo.append(found)
    finally:
        del sys.path[: len(extra_path)]
    return (files[0], *sorted(files[1:]))


def source_hash(ref: str) -> str:
    """sha256 over the kernel's source files (:func:`kernel_files`), for caches and provenance.

    An edit to a helper module the spec imports (the ``@triton.jit`` function often lives
    in one) changes it, so winners cached for the old code are not reused.
    """
    from harness.model.kernel_refs import OpRef, decode

    digest = hashlib.sha256()
    files = kernel_files(ref)
    if isinstance(
        decode(ref), OpRef
    ):  # the library's kernel is installed code: its source is what the winners were chosen for
        jit = load(ref).fn
        digest.update(getattr(jit, "src", "").encode())
        if not files:
            return digest.hexdigest()
    try:
        for path in files:
            digest.update(str(path.name).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    except OSError:
        return "unknown"
    return digest.hexdigest() if files else "unknown"
