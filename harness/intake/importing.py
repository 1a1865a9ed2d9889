"""Importing the module a kernel reference names, and the one error every failure to do so becomes.

Kept apart from :mod:`harness.intake.loader` (which dispatches a reference to a spec file, a module or a captured op)
so that the op capture can import a library's function without importing the loader back.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path


class KernelLoadError(Exception):
    """A kernel reference that cannot be resolved or does not yield a KernelSpec."""


#: each kernel file's module name, by its path, once chosen in this process
_NAMES: dict[str, str] = {}


def _module_name(path: Path) -> str:
    """The name a kernel file is imported under: its folder's and its own name and a digest of its text, not where
    the checkout lies.

    Triton mangles a ``noinline`` function's symbol with its module's name, so a name drawn from the absolute path
    made two checkouts in two folders (two runners' build directories) build two binaries of one kernel, and
    ``harness compare`` call the kernel changed. The text's digest keeps two files of the same names apart (two
    versions of a library in one matrix) in every process alike, whichever it loads first; a second file of the
    same text as well gets its path's digest added, so that neither is taken for the other (their sibling modules
    may differ)."""
    if str(path) in _NAMES:  # one module per file for the life of a process, as before
        return _NAMES[str(path)]
    text = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    readable = re.sub(r"[^A-Za-z0-9_]", "_", f"{path.parent.name}_{path.stem}")  # it goes into symbols: ASCII
    name = f"harness_kernel_{readable}_{text}"
    held = sys.modules.get(name)
    if held is not None and getattr(held, "__file__", None) != str(path):
        name += "_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    _NAMES[str(path)] = name
    return name


def import_attr(ref: str) -> object:
    """Import the module a canonical reference names (``/abs/file.py:ATTR`` or ``module:ATTR``) and return the
    attribute. Raises :class:`KernelLoadError` with the reason in one line."""
    from harness.support import tritoncompat

    tritoncompat.installed_triton_version()  # the harness's own import first: records cite it, never a user's
    location, _, attr = ref.rpartition(":")
    try:
        if location.endswith(".py"):
            path = Path(location)
            if not path.is_file():
                raise KernelLoadError(f"kernel file {path} does not exist")
            mod_name = _module_name(path)
            module = sys.modules.get(mod_name)
            if str(path.parent) not in sys.path:  # its sibling modules import as they do when it runs as a script
                sys.path.insert(0, str(path.parent))
            if module is None:
                spec = importlib.util.spec_from_file_location(mod_name, path)
                assert spec is not None and spec.loader is not None
                module = importlib.util.module_from_spec(spec)
                sys.modules[mod_name] = module
                spec.loader.exec_module(module)
        else:
            module = importlib.import_module(location)
    except KernelLoadError:
        raise
    except SystemExit as exc:  # a module that calls sys.exit() at import must not end the harness
        raise KernelLoadError(f"cannot import kernel {location}: it calls sys.exit({exc.code!r}) at import") from None
    except Exception as exc:  # noqa: BLE001 - a user's module may raise anything on import
        raise KernelLoadError(f"cannot import kernel {location}: {type(exc).__name__}: {exc}") from exc
    if tritoncompat.triton_replaced():
        raise KernelLoadError(
            f"importing {location} replaced the triton module (sys.modules['triton']): the harness compiles and "
            "records with the Triton it imported itself; a kernel module must not swap it"
        )
    if not hasattr(module, attr):
        raise KernelLoadError(f"{location} has no attribute {attr!r}")
    return getattr(module, attr)
