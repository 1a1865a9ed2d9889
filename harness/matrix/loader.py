"""Finding and loading kernel specs.

A kernel is named in a matrix either by the name of a file in the repository's
``kernels/`` directory (``matmul``), or by ``module:attribute`` for a user's own
importable spec (``mypkg.kernels.rmsnorm:SPEC``), or by ``path/to/file.py:SPEC``.
Repository kernel files are loaded by path under a private module name, so no
top-level package called ``kernels`` is ever imported or installed.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from harness.authoring.spec import KernelSpec
from harness.matrix.importing import KernelLoadError, import_attr


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
    (:mod:`harness.matrix.ops`)."""
    from harness.matrix import ops

    if ops.is_op(ref):
        try:
            return ops.spec_for(ref)
        except KernelLoadError:
            raise
        except Exception as exc:  # noqa: BLE001 - capture runs the library's code: said in one line
            raise KernelLoadError(f"cannot capture the op's kernel: {type(exc).__name__}: {exc}") from None
    location, _, attr = ref.rpartition(":")
    try:
        obj = import_attr(ref)
    except KernelLoadError as exc:
        if "has no attribute" not in str(exc):
            raise
        obj = None
    if not isinstance(obj, KernelSpec):
        raise KernelLoadError(f"{location} has no KernelSpec named {attr!r}")
    return obj


#: the import probe's child: it reads a fresh nonce from stdin before any user module runs and says it after each
#: import, so a module that prints the marker and exits cannot pass for one that imported
_PROBE = """
import importlib, importlib.util, sys
from harness.support.lifeline import watch_parent
watch_parent()
nonce = sys.stdin.readline().strip()
sys.stdin.close()
for i, location in enumerate(sys.argv[1:]):
    if location.endswith(".py"):
        sys.path.insert(0, location.rpartition("/")[0] or ".")
        spec = importlib.util.spec_from_file_location(f"harness_probe_module_{i}", location)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    print("harness-probe-imported", nonce, i, flush=True)
"""


def import_timeout_s() -> float:
    """``HARNESS_IMPORT_TIMEOUT_S`` (:mod:`harness.support.settings`: a value that is no number of seconds is an
    error, checked by the command line before a matrix is read)."""
    from harness.support.settings import timeout_s

    return timeout_s("HARNESS_IMPORT_TIMEOUT_S")


@contextmanager
def environ(variables: tuple[tuple[str, str], ...]) -> Iterator[None]:
    """A kernel entry's ``import_env`` set in this process while its modules are imported (the matrix is read)."""
    saved = {k: os.environ.get(k) for k, _ in variables}
    os.environ.update(dict(variables))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@lru_cache(maxsize=None)
def _probe_cached(
    locations: tuple[str, ...], stamps: tuple[float, ...], import_env: tuple[tuple[str, str], ...] = ()
) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.update(dict(import_env))
    env.pop("TRITON_INTERPRET", None)
    timeout = import_timeout_s()
    marker = f"harness-probe-imported {secrets.token_hex(16)} "
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, *locations],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=marker.split()[1] + "\n",
        )
        done = _imports_said(proc.stdout, marker, len(locations))
    except subprocess.TimeoutExpired as exc:
        said = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        done = _imports_said(said, marker, len(locations))
        return (
            f"importing {locations[min(done, len(locations) - 1)]} did not finish within {timeout:g} s "
            "(it hangs at import?)"
        )
    if done == len(locations) and proc.returncode == 0:
        return ""
    location = locations[min(done, len(locations) - 1)]
    if proc.returncode < 0:
        return f"importing {location} killed the process ({signal.Signals(-proc.returncode).name})"
    last = " ".join(proc.stderr.strip().splitlines()[-1:])[:300]
    if proc.returncode == 0:
        return (
            f"importing {location} ended the process (exit code 0) before it finished: it calls sys.exit or "
            "os._exit at import"
        )
    return f"cannot import kernel {location}: exit code {proc.returncode}" + (f": {last}" if last else "")


def _imports_said(stdout: str, marker: str, count: int) -> int:
    """How many imports the probe finished, in order, by its nonce-bearing lines (a module's own prints aside)."""
    lines = {line for line in stdout.splitlines() if line.startswith(marker)}
    done = 0
    while done < count and f"{marker}{done}" in lines:
        done += 1
    return done


def probe(ref: str, import_env: tuple[tuple[str, str], ...] = ()) -> None:
    """Import a user's kernel module in a child process first (timeout ``HARNESS_IMPORT_TIMEOUT_S``).

    A module that exits, crashes or hangs at import then costs a clear error,
    not the harness. The repository's own kernels are not probed. Raises
    :class:`KernelLoadError` with the reason.
    """
    from harness.matrix import ops

    probe_all(ops.OpRef.decode(ref).files if ops.is_op(ref) else [ref], import_env)


#: (location, stamp) of every module a probe imported cleanly in this process
_PROBED: set[tuple[str, float, tuple[tuple[str, str], ...]]] = set()


def probe_all(refs: list[str], import_env: tuple[tuple[str, str], ...] = ()) -> None:
    """:func:`probe` for several references in one child process (every op entry of a matrix at once: a library
    such as fla-core takes ~10 s to import); a module imported cleanly by an earlier probe is not probed again."""
    locations, stamps = [], []
    for ref in refs:
        location = ref.rpartition(":")[0]
        stamp = 0.0
        if location.endswith(".py"):
            path = Path(location)
            if path.parent == REPO_KERNELS or not path.is_file():
                continue  # our own kernels are trusted; a missing file is reported by load()
            stamp = path.stat().st_mtime
        if location not in locations and (location, stamp, import_env) not in _PROBED:
            locations.append(location)
            stamps.append(stamp)
    if not locations:
        return
    problem = _probe_cached(tuple(locations), tuple(stamps), import_env)
    if problem:
        raise KernelLoadError(problem)
    _PROBED.update((loc, stamp, import_env) for loc, stamp in zip(locations, stamps))


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
    except (ImportError, ValueError):
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
    from harness.matrix import ops

    if ops.is_op(ref):
        found: list[Path] = []
        for part in ops.OpRef.decode(ref).files:
            found += [p for p in kernel_files(part) if p not in found]
        return found
    location = ref.rpartition(":")[0]
    try:
        stamp = Path(location).stat().st_mtime_ns if location.endswith(".py") else 0
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
    from harness.matrix import ops

    digest = hashlib.sha256()
    files = kernel_files(ref)
    if ops.is_op(ref):  # the library's kernel is installed code: its source is what the winners were chosen for
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
