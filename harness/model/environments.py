"""Compile environments: environment variables that change Triton's code generation.

The shared memory / LDS a config needs depends on the exact Triton build and on
codegen knobs (``TRITON_HIP_USE_ASYNC_COPY=1`` makes some gfx942 GEMM tiles
overflow 64 KiB that fit without it). An environment is part of a record's
identity; compiles under different environments run in different worker
processes with different Triton cache directories, so nothing can leak between
them.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.support.checking import Checker, suggest

DEFAULT = "default"

#: the allow-list: codegen variables per backend, as named in Triton 3.6's knobs.py. Nothing else may be set by
#: a matrix's ``environments``: a variable off this list either changes no code (a dump, a debug print), or makes
#: Triton load code or write files of the matrix's choosing (see REFUSED).
CODEGEN_VARIABLES: dict[str, frozenset[str]] = {
    "cuda": frozenset(
        {
            "TRITON_DEFAULT_FP_FUSION",
            "TRITON_PTXAS_PATH",
            "TRITON_PTXAS_BLACKWELL_PATH",
            "DISABLE_PTXAS_OPT",
            "TRITON_DISABLE_LINE_INFO",
            "TRITON_F32_DEFAULT",
        }
    ),
    "hip": frozenset(
        {
            "TRITON_HIP_USE_ASYNC_COPY",
            "TRITON_HIP_USE_BLOCK_PINGPONG",
            "TRITON_HIP_USE_IN_THREAD_TRANSPOSE",
            "AMDGCN_USE_BUFFER_OPS",
            "AMDGCN_USE_BUFFER_ATOMICS",
            "AMDGCN_SCALARIZE_PACKED_FOPS",
            "AMDGCN_ANALYZE_SMALL_TENSOR_RANGE",
            "TRITON_DEFAULT_FP_FUSION",
            "TRITON_DISABLE_LINE_INFO",
            "TRITON_F32_DEFAULT",
        }
    ),
}


#: variables a matrix may not set: the harness sets them itself, or they write outside the run directory
HARNESS_OWNED = frozenset(
    {
        "TRITON_CACHE_DIR",
        "TRITON_INTERPRET",
        "TRITON_DUMP_DIR",
        "TRITON_KERNEL_DUMP",
        "TRITON_ALWAYS_COMPILE",
        "TRITON_OVERRIDE_DIR",
        "TRITON_KERNEL_OVERRIDE",
        "TRITON_HOME",
    }
)

#: variables refused with the reason (beyond HARNESS_OWNED): each makes Triton import code, talk to a cache
#: elsewhere, or drop what the harness records
REFUSED: dict[str, str] = {
    **dict.fromkeys(
        ("TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND"),
        "makes Triton import a class the value names: code outside the matrix's kernels that can write anywhere",
    ),
    **dict.fromkeys(
        ("TRITON_REDIS_HOST", "TRITON_REDIS_PORT", "TRITON_REDIS_KEY_FORMAT"),
        "points Triton's cache at a remote server: builds would not be this run's own",
    ),
    "TRITON_STORE_BINARY_ONLY": "makes Triton keep only the binary: the IR and assembly the harness records would "
    "be missing from every build",
}

#: removed from every worker's environment, whoever set them: the harness needs the IR Triton would drop
STRIPPED = frozenset({"TRITON_STORE_BINARY_ONLY"})


@dataclass(frozen=True)
class Environment:
    name: str
    env: tuple[tuple[str, str], ...] = ()

    @property
    def is_default(self) -> bool:
        return not self.env

    def as_dict(self) -> dict[str, str]:
        return dict(self.env)

    def digest(self) -> str:
        return hashlib.sha256(repr(sorted(self.env)).encode()).hexdigest()[:12]


DEFAULT_ENV = Environment(DEFAULT)


@lru_cache(maxsize=1)
def _knobs_source() -> str | None:
    try:
        import triton
    except Exception:  # noqa: BLE001
        return None
    path = Path(triton.__file__).parent / "knobs.py"
    return path.read_text() if path.is_file() else None


def read_by_installed_triton(name: str) -> bool | None:
    """Whether the installed Triton reads this variable (None when Triton is not importable).

    Triton ignores variables it does not know, so a knob renamed between releases
    would silently compile the default: the matrix check refuses such a name.
    """
    source = _knobs_source()
    if source is None:
        return None
    # a knob is declared as ``env_bool("NAME", ...)`` / ``env_str(...)`` ...: any other quoted string is not one
    if re.search(rf"\benv_\w+\(\s*[\"']{re.escape(name)}[\"']", source):
        return True
    tool = re.match(r"TRITON_(.+)_PATH$", name)  # env_nvidia_tool("ptxas") reads TRITON_PTXAS_PATH
    return bool(tool and re.search(rf"env_nvidia_tool\([\"']{tool.group(1).lower().replace('_', '-')}[\"']\)", source))


def worker_env(base: dict[str, str], environment: Environment) -> dict[str, str]:
    """The process environment for a worker compiling under ``environment``.

    Every codegen knob not named by the environment is removed, so the default
    environment is really Triton's defaults (tool paths such as
    ``TRITON_PTXAS_PATH`` set by the caller are kept); a non-default
    environment gets its own Triton cache directory.
    """
    knobs = {k for names in CODEGEN_VARIABLES.values() for k in names if not k.endswith("_PATH")} | STRIPPED
    env = {k: v for k, v in base.items() if k not in knobs}
    env.update(environment.as_dict())
    if not environment.is_default:
        root = base.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
        env["TRITON_CACHE_DIR"] = os.path.join(root, f"harness-env-{environment.digest()}")
    return env


def parse_environments(
    chk: Checker,
    raw: Any,
    target_names: list[str],
    backend_of: dict[str, str],
    named: dict[str, tuple[Environment, ...]] | None = None,
    at: tuple[Any, ...] = ("environments",),
) -> tuple[tuple[str, tuple[Environment, ...]], ...]:
    """``environments: {target: [default, NAME, {name: ..., env: {VAR: value}}]}``, checked against the backend's
    knobs; a bare name is ``default`` or one of the target's catalogue environments (``named``). ``at``: where the
    mapping is in the matrix (the matrix's own, or one kernel's)."""
    out = []
    for target, entries in raw.items():
        path = at + (target,)
        if target not in target_names:
            chk.add(
                path,
                f"environments for {target!r}, which is not a target of this matrix{suggest(target, target_names)}",
            )
            continue
        if not isinstance(entries, list) or not entries:
            chk.add(path, f"environments of {target!r} must be a non-empty list of {{name, env}}")
            continue
        backend = backend_of.get(target, "hip")
        envs, names = [], set()
        offered = {e.name: e for e in (named or {}).get(target, ())}
        for i, entry in enumerate(entries):
            where = path + (i,)
            if isinstance(entry, str):  # a name: Triton's defaults, or an environment the catalogue offers
                if entry != DEFAULT and entry not in offered:
                    known = [DEFAULT, *offered]
                    chk.add(
                        where,
                        f"{target!r} has no environment named {entry!r}{suggest(entry, known)}: name one of "
                        f"{', '.join(known)}, or give one as {{name: ..., env: {{VARIABLE: value}}}}",
                    )
                    continue
                entry = {"name": entry, "env": dict(offered[entry].env)} if entry != DEFAULT else {"name": DEFAULT}
            if not isinstance(entry, dict) or set(entry) - {"name", "env"} or not isinstance(entry.get("name"), str):
                chk.add(where, "an environment is a mapping {name: str, env: {VARIABLE: value}}")
                continue
            if entry["name"] in names:
                chk.add(where + ("name",), f"duplicate environment name {entry['name']!r} for {target!r}")
            names.add(entry["name"])
            env = entry.get("env") or {}
            if not isinstance(env, dict):
                chk.add(where + ("env",), "env must be a mapping of VARIABLE: value")
                continue
            for var, value in env.items():
                problem = _variable_problem(str(var), backend, target)
                if problem:
                    chk.add(where + ("env", var), problem)
                if not isinstance(value, (str, int, bool)):
                    chk.add(where + ("env", var), f"value of {var} must be a string, number or boolean")
            pairs = tuple(sorted((str(k), str(int(v)) if isinstance(v, bool) else str(v)) for k, v in env.items()))
            if entry["name"] == DEFAULT and pairs:
                chk.add(where + ("env",), "the environment named 'default' is Triton's defaults: it sets no variables")
            envs.append(Environment(entry["name"], pairs))
        out.append((target, tuple(envs)))
    return tuple(out)


def _variable_problem(var: str, backend: str, target: str) -> str:
    """Why ``var`` cannot be a compile-environment variable of ``target`` ('' when it can): the allow-list."""
    known = CODEGEN_VARIABLES[backend]
    others = {v for b, names in CODEGEN_VARIABLES.items() if b != backend for v in names} - known
    if var in REFUSED:
        return f"{var!r} {REFUSED[var]}: it cannot be a compile environment variable"
    if var in HARNESS_OWNED:
        return (
            f"{var!r} is set by the harness itself or writes outside the run directory: it cannot be a compile "
            "environment variable"
        )
    if var in others:
        return (
            f"{var!r} is read by another backend, not by {target!r}'s {backend} backend: it would compile "
            "Triton's default silently"
        )
    if var not in known:
        return (
            f"{var!r} is not on the harness's list of {backend} codegen variables ({', '.join(sorted(known))})"
            f"{suggest(var, known)}"
        )
    if read_by_installed_triton(var) is False:
        return f"{var!r} is not read by the installed triton: it would compile Triton's default silently"
    return ""
