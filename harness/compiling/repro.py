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

import ast
import inspect
import math
import pprint
import re
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.compiling import launchspec
from harness.intake import loader
from harness.model.kernel_refs import InductorRef, decode
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
                constants[name] = data_literal(value)
            elif type(value).__name__ == "constexpr" and isinstance(getattr(value, "value", None), (bool, int, float)):
                imports.setdefault("tl", "import triton.language as tl")
                constants[name] = f"tl.constexpr({data_literal(value.value)})"
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
    # what is written as code must be names: a function or module renamed at run time is refused
    dotted = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
    for line in imports.values():
        if not all(dotted.fullmatch(w) for w in line.split() if w not in ("import", "from", "as")):
            raise ReproError(f"an import the kernel needs is not spelled as names: {line!r}")
    for raw_name in functions:
        if not raw_name.isidentifier():
            raise ReproError(f"a @triton.jit function is named {raw_name!r}, which is not a Python name")
    return KernelSource(
        tuple(sorted(set(imports.values()))),
        tuple(f"{k} = {v}" for k, v in sorted(constants.items())),
        tuple(functions.values()),
        fn.fn.__name__,
    )


def _recorded(record: Record) -> dict[str, Any]:
    return {
        "status": record.status,
        "error": record.error.splitlines()[0] if record.error else "",
        "figures": _recorded_figures(record),
        "flags": [f"{f.resource} {f.value:g} > {f.limit:g}" for f in record.flags],
    }


def inductor_case(record: Record, made: InductorRef, target: Target) -> tuple[Any, dict[str, Any]]:
    """A kernel Inductor generated: (its JIT function, the case) from the module recorded for this target, shape
    and dtype and the compile meta and options Inductor's own autotuner makes for the config, as the build had them."""
    from harness.compiling.compiled_build import compile_parts
    from harness.intake.inductor import inductor_ref
    from harness.support.cache import cache_dir

    slot = made.slot(target.name, record.shape, record.dtype)
    if slot is None:
        raise ReproError(f"{made.kernel} is not in {target.name}'s graph of {made.entry} for this shape and dtype")
    auto, meta, options = compile_parts(
        inductor_ref.source(slot.source), made.kernel, record.config, cache_dir() / "inductor-modules"
    )
    names = list(auto.fn.arg_names)
    constexprs = [[[names.index(k)] if isinstance(k, str) else list(k), v] for k, v in meta["constants"].items()]
    plain = (bool, int, float, str, type(None))
    return auto.fn, {
        "label": f"{record.kernel} {record.dtype} {record.shape_id} {record.column} {record.config_id}",
        "triton": record.triton,
        "signature": dict(meta["signature"]),
        "constexprs": constexprs,
        "attrs": [[list(k), [list(a) for a in v]] for k, v in meta["configs"][0].items()],
        "target": [target.backend, target.arch, target.warp_size],
        "options": {k: v for k, v in options.items() if isinstance(v, plain)},
        "env": {**record.import_env, **record.env},
        "recorded": _recorded(record),
    }


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
        "recorded": _recorded(record),
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
    made = decode(ref)
    if isinstance(made, InductorRef):  # Inductor's module, as the build compiled it: its helpers come from torch
        fn, case = inductor_case(record, made, target)
        needs = f"Needs Triton {record.triton} and torch {made.torch} (Inductor's helpers); no GPU, no harness."
    else:
        fn, case = loader.load(ref).for_target(target).fn, case_of(record, ref, target)
        needs = f"Needs only Triton {record.triton} (`pip install triton=={record.triton}`); no GPU, no harness."
    source = kernel_source(fn)
    finding = _finding(case["recorded"])
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
    doc = f"Reproduces {case['label']}: {finding}.\n\n{about}\n"
    # every value below is data: the docstring a literal that reads back as the text, CASE and LAUNCH literals of
    # plain values (tests/test_repro_injection.py writes the script for hostile names, shapes, configs and env)
    head = (
        "#!/usr/bin/env python3\n"
        + docstring_literal(doc)
        + "\n\nimport os\nimport sys\nfrom typing import Any\n\n"
        + f"CASE = {data_literal(case)}\n"
        + f"LAUNCH = {data_literal(launch)}\n"
        + 'os.environ.update(CASE["env"])  # the compile environment, before Triton reads it\n\n'
    )
    kernel = "\n".join(["import triton", *source.imports, "", *source.constants, "", "", *source.functions])
    text = head + kernel + f"\n\nKERNEL = {source.entry}\n\n\n" + _body()
    _check_parses(text, doc)
    return text


def _body() -> str:
    """:mod:`harness.compiling.repro_main` below its marker: the part every script shares, a real module ruff and mypy
    check."""
    text = (Path(__file__).parent / "repro_main.py").read_text()
    return text.split("# --- the body of every repro script: below this line ---\n", 1)[1]


def docstring_literal(text: str) -> str:
    """``text`` as a triple-quoted literal that Python reads back as exactly ``text``, whatever it holds: backslashes
    and quotes escaped (no ``\"\"\"`` can close it), and every character that is not printable -- controls, the
    bidirectional overrides that would show the script's lines reordered -- as its ``\\u`` escape."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n" or (ch.isprintable() and not _BIDI.match(ch)):
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return '"""' + "".join(out) + '"""'


def data_literal(value: Any) -> str:
    """A Python literal of plain data (dicts, lists, tuples, strings, numbers, booleans, None), laid out by pprint.
    Each value is first rebuilt as its exact built-in type, so no object's own ``__repr__`` reaches the text (a
    ``str`` subclass becomes a plain string); a non-finite float is written ``float('nan')``, which a literal
    cannot say; anything else is refused."""
    return _DataPrinter(width=110, sort_dicts=True).pformat(_plain(value))


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return None if value is None else bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return "" + value  # the exact str, whatever the subclass
    if isinstance(value, (list, tuple)):
        items = [_plain(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise ReproError(f"a value the script would carry is not plain data: {type(value).__name__}")


class _DataPrinter(pprint.PrettyPrinter):
    """pprint, with the non-finite floats Python's literals have no spelling for written as calls."""

    def format(self, obj: object, context: dict[int, int], maxlevels: int, level: int) -> tuple[str, bool, bool]:
        if isinstance(obj, float) and not math.isfinite(obj):
            return f"float({str(obj)!r})", True, False
        return super().format(obj, context, maxlevels, level)


#: the Unicode bidirectional embeddings, overrides and isolates, and the marks
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _check_parses(text: str, doc: str) -> None:
    """The script is Python whose docstring is the text meant: a check on this module's own quoting."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:  # pragma: no cover - a bug in the quoting above, never the user's input
        raise ReproError(f"the script would not parse ({exc}); please report this") from None
    if ast.get_docstring(tree, clean=False) != doc:  # pragma: no cover - likewise
        raise ReproError("the script's docstring would not read back as written; please report this")


def _finding(recorded: dict[str, Any]) -> str:
    if recorded["status"] != "ok":
        return f"the build fails ({recorded['error'] or recorded['status']})"
    if recorded["flags"]:
        return "over a limit: " + "; ".join(recorded["flags"])
    return "builds and fits"
