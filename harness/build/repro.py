"""A recorded build as a standalone script a Triton maintainer can run: plain Triton, no harness import.

``harness repro`` (:mod:`harness.cli.repro`) turns one compile record into a script that rebuilds that config for
that target with what the record says Triton was given — the launch specialisation as an ``ASTSource`` (signature,
constexprs, attributes), the compile options, the compile environment's variables set before Triton is imported —
and then prints what the harness recorded beside what this compile gives: the error for a failed build, the
figures a limit was checked on (shared memory / LDS, registers, spills) for one that exceeded or spilled. It exits
0 when the recorded outcome came back, 1 when it did not, so it works as a bug report and as a regression check.

The kernel travels as source: the ``@triton.jit`` function, every ``@triton.jit`` helper it calls, the constants
it reads and the modules it names, taken from the function's globals as Triton's own dependency walk sees them.
Anything else a kernel reads from its module (an object the script could not rebuild) is refused by name.
"""

from __future__ import annotations

import inspect
import pprint
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.build import launchspec
from harness.matrix import loader
from harness.model.records import Record
from harness.model.targets import Target
from harness.support import tritoncompat


class ReproError(Exception):
    """A record that cannot become a standalone script, with the reason."""


@dataclass(frozen=True)
class KernelSource:
    imports: tuple[str, ...]  # import lines the kernel's globals need
    constants: tuple[str, ...]  # NAME = value lines
    functions: tuple[str, ...]  # the @triton.jit functions, helpers first
    entry: str  # the kernel's name


def kernel_source(fn: Any) -> KernelSource:
    """The source of a ``JITFunction`` and of what it reads from its module, in an order that runs."""
    from triton.runtime.jit import JITFunction

    imports: dict[str, str] = {}
    constants: dict[str, str] = {}
    functions: dict[str, str] = {}

    def names(code: types.CodeType) -> set[str]:
        found = set(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                found |= names(const)
        return found

    def visit(jit: Any) -> None:
        raw = jit.fn
        if raw.__name__ in functions:
            return
        functions[raw.__name__] = ""  # placeholder: a recursive helper is visited once
        for name in sorted(names(raw.__code__)):
            if name not in raw.__globals__:
                continue  # a builtin, or an attribute name
            value = raw.__globals__[name]
            if isinstance(value, JITFunction):
                visit(value)
                if value.fn.__name__ != name:
                    constants[name] = value.fn.__name__
            elif isinstance(value, types.ModuleType):
                imports[name] = (
                    f"import {value.__name__}" if value.__name__ == name else f"import {value.__name__} as {name}"
                )
            elif isinstance(value, (bool, int, float, str)) or value is None:
                constants[name] = repr(value)
            elif type(value).__name__ == "constexpr" and isinstance(getattr(value, "value", None), (bool, int, float)):
                imports.setdefault("tl", "import triton.language as tl")
                constants[name] = f"tl.constexpr({value.value!r})"
            elif callable(value) and getattr(value, "__module__", "").startswith("triton"):
                imports[name] = f"from {value.__module__} import {value.__name__} as {name}"
            else:
                raise ReproError(
                    f"{raw.__name__} reads {name} ({type(value).__name__}) from its module, which a standalone "
                    "script cannot rebuild"
                )
        body = textwrap.dedent(inspect.getsource(raw))
        body = body[body.index("def ") :]  # the harness's decorators aside: the script compiles it plainly
        functions.pop(raw.__name__)
        functions[raw.__name__] = "@triton.jit\n" + body

    visit(fn)
    return KernelSource(
        tuple(sorted(set(imports.values()))),
        tuple(f"{k} = {v}" for k, v in sorted(constants.items())),
        tuple(functions.values()),
        fn.fn.__name__,
    )


def case_of(record: Record, ref: str, target: Target) -> dict[str, Any]:
    """What the script rebuilds, as plain JSON: the ASTSource's parts, the target, the options, the environment, and
    what the harness recorded."""
    spec = loader.load(ref).for_target(target)
    meta, options = spec.split_config(record.config)
    known = tritoncompat.backend_option_names(target.backend)
    launch = launchspec.for_case(
        spec,
        record.shape,
        record.dtype,
        meta,
        {k: v for k, v in options.items() if k in known},
        launchspec.backend_for(target.backend, target.arch, target.warp_size),
        target,
    )
    plain = (bool, int, float, str, type(None))
    odd = [k for k, v in launch.constexprs.items() if not isinstance(v, plain)]
    if odd:
        raise ReproError(f"constexpr(s) at {odd} are not plain values a script can carry")
    options = dict(launch.options)
    # Triton's own libdevice, named by this host's path: the script's Triton adds its own where it runs
    if all(str(path).startswith(str(Path(triton_root()))) for _, path in options.get("extern_libs") or ()):
        options.pop("extern_libs", None)
    return {
        "label": f"{record.kernel} {record.dtype} {record.shape_id} {record.column} {record.config_id}",
        "triton": record.triton,
        "signature": dict(launch.signature),
        "constexprs": [[list(k), v] for k, v in launch.constexprs.items()],
        "attrs": [[list(k), [list(a) for a in v]] for k, v in launch.attrs.items()],
        "target": [target.backend, target.arch, target.warp_size],
        "options": options,
        "env": {**record.import_env, **record.env},
        "recorded": {
            "status": record.status,
            "error": record.error.splitlines()[0] if record.error else "",
            "figures": _recorded_figures(record),
            "flags": [f"{f.resource} {f.value:g} > {f.limit:g}" for f in record.flags],
        },
    }


def triton_root() -> str:
    """The installed triton package's folder."""
    import triton

    return str(Path(triton.__file__).parent)


def _recorded_figures(record: Record) -> dict[str, int]:
    """The figures the script measures again, under the names it gives them."""
    res = record.resources.to_json()
    if record.vendor == "amd":
        pairs = {"shared": "shared", "vgpr": "vgpr", "agpr": "agpr", "vgpr_spill": "vgpr_spill",
                 "sgpr_spill": "sgpr_spill", "scratch_bytes": "scratch_bytes"}  # fmt: skip
    else:
        pairs = {"shared": "shared", "registers": "ptxas_registers", "spill_store_bytes": "spill_store_bytes",
                 "spill_load_bytes": "spill_load_bytes"}  # fmt: skip
    return {mine: int(res[theirs]) for mine, theirs in pairs.items() if isinstance(res.get(theirs), int)}


def script(record: Record, ref: str, target: Target, provenance: str, launch: dict[str, Any] | None = None) -> str:
    """The standalone script for ``record`` (built from kernel ``ref`` for ``target``); with ``launch``
    (:func:`harness.device.repro_launch.launch_data`) it also replays the recorded check from the ``.pt`` file saved
    beside it."""
    from harness.build.repro_body import BODY

    source = kernel_source(loader.load(ref).for_target(target).fn)
    case = case_of(record, ref, target)
    finding = _finding(case["recorded"])
    needs = f"Needs only Triton {record.triton} (`pip install triton=={record.triton}`); no GPU, no harness."
    if launch is not None:
        finding += f"; its check on the {launch['where']}: {launch['recorded']['status']}"
        needs = (
            f"Needs only Triton {record.triton} and torch; no harness. The launch runs on this host's GPU, or "
            "without one under Triton's CPU interpreter; its inputs and reference are in the .pt file of the same name."
        )
    about = textwrap.fill(
        f"Recorded by {provenance}. {needs} Prints what the harness recorded and what this compile gives; exit 0: "
        "the recorded outcome came back. Written by `harness repro`.",
        width=112,
    )
    head = f'''#!/usr/bin/env python3
"""Reproduces {case["label"]}: {finding}.

{about}
"""

import os
import sys

CASE = {pprint.pformat(case, width=110, sort_dicts=True)}
LAUNCH = {pprint.pformat(launch, width=110, sort_dicts=True)}
os.environ.update(CASE["env"])  # the compile environment, before Triton reads it

'''
    kernel = "\n".join(["import triton", *source.imports, "", *source.constants, "", "", *source.functions])
    return head + kernel + f"\n\nKERNEL = {source.entry}\n" + BODY


def _finding(recorded: dict[str, Any]) -> str:
    if recorded["status"] != "ok":
        return f"the build fails ({recorded['error'] or recorded['status']})"
    if recorded["flags"]:
        return "over a limit: " + "; ".join(recorded["flags"])
    return "builds and fits"
