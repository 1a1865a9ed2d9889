"""A matrix's ``compiled:`` section, checked before anything is imported: one entry per function (or ``nn.Module``
factory) that ``torch.compile`` turns into TorchInductor's Triton kernels.

    compiled:
      act:
        fn: models.py:activation        # or module:function
        inputs: models.py:act_inputs    # inputs(shape, dtype, device, generator), as for an op:
        shapes: [{M: 8192, N: 8192}]
        dtypes: [bf16]
        factory: false                  # true: fn(shape, dtype) returns the nn.Module to compile
        mode: max-autotune              # optional: torch.compile's mode (its Inductor options)
        dynamic: true                   # optional: the kernels Inductor makes for dynamic shapes
        options: {}                     # optional: Inductor options on top

Each problem is one ``file:line: message`` (collected, never the first only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.intake import loader
from harness.intake.inductor.captured import CapturedGraph
from harness.intake.inductor.compiled_probe import Request
from harness.matrix.configs import ConfigEntry
from harness.matrix.entry import KernelEntry
from harness.support.checking import Checker

KEYS = {"fn", "inputs", "shapes", "dtypes", "factory", "mode", "options", "reference", "dynamic"}
MODES = ("default", "max-autotune", "max-autotune-no-cudagraphs")
DTYPES = ("fp16", "bf16", "fp32")


def requests(chk: Checker, section: Any, base_dir: Path) -> list[Request]:
    """The section's entries as capture requests; problems go to ``chk`` (the entry is then left out)."""
    if not isinstance(section, dict) or not section:
        chk.add(("compiled",), "compiled: is a mapping of entry names to entries (fn, inputs, shapes, dtypes)")
        return []
    out = []
    for name, entry in section.items():
        path: tuple[Any, ...] = ("compiled", name)
        if not isinstance(entry, dict):
            chk.add(path, f"compiled entry {name!r} is a mapping (fn, inputs, shapes, dtypes)")
            continue
        before = len(chk.problems)
        for key in sorted(set(entry) - KEYS):
            chk.add(path + (key,), f"unknown key {key!r} in compiled entry {name!r} (known: {', '.join(sorted(KEYS))})")
        refs = {k: _ref(chk, str(name), entry, k, path, base_dir) for k in ("fn", "inputs")}
        shapes = entry.get("shapes")
        if not isinstance(shapes, list) or not shapes or not all(_is_shape(s) for s in shapes):
            chk.add(path + ("shapes",), "shapes is a non-empty list of mappings of names to positive integers")
        dtypes = entry.get("dtypes")
        if not isinstance(dtypes, list) or not dtypes or any(d not in DTYPES for d in dtypes):
            chk.add(path + ("dtypes",), f"dtypes is a non-empty list of {', '.join(DTYPES)}")
        mode = entry.get("mode")
        if mode is not None and mode not in MODES:
            chk.add(path + ("mode",), f"mode is one of {', '.join(MODES)}, got {mode!r}")
        options = entry.get("options", {})
        if not isinstance(options, dict) or not all(isinstance(v, (bool, int, float, str)) for v in options.values()):
            chk.add(path + ("options",), "options is a mapping of Inductor config names to plain values")
        factory = entry.get("factory", False)
        if not isinstance(factory, bool):
            chk.add(path + ("factory",), f"factory is true or false, got {factory!r}")
        dynamic = entry.get("dynamic", False)
        if not isinstance(dynamic, bool):
            chk.add(path + ("dynamic",), f"dynamic is true or false, got {dynamic!r}")
        if len(chk.problems) > before:
            continue
        out.append(
            Request(
                str(name),
                str(refs["fn"]),
                str(refs["inputs"]),
                tuple(shapes or ()),
                tuple(map(str, dtypes or ())),
                None if mode in (None, "default") else str(mode),
                tuple(sorted(options.items())),
                factory,
                dynamic,
            )  # fmt: skip
        )
    return out


def _is_shape(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value.values())
    )


def _ref(chk: Checker, name: str, entry: dict[str, Any], key: str, path: tuple[Any, ...], base_dir: Path) -> str:
    """``file.py:ATTR`` (relative to the matrix's folder, made absolute) or ``module:ATTR``; "" after a problem."""
    value = entry.get(key)
    try:
        ref = loader.resolve(name, str(value), None, base_dir) if isinstance(value, str) else ""
    except loader.KernelLoadError as exc:
        chk.add(path + (key,), str(exc))
        return ""
    if not ref:
        chk.add(path + (key,), f"{key} names 'file.py:ATTR' or 'module:ATTR', got {value!r}")
    elif ref.rpartition(":")[0].endswith(".py") and not Path(ref.rpartition(":")[0]).is_file():
        chk.add(path + (key,), f"{key}: no file {ref.rpartition(':')[0]}")
        return ""
    elif ref.rpartition(":")[0].endswith(".py"):
        file, _, attr = ref.rpartition(":")
        missing = _undefined(Path(file), attr)
        if missing:
            chk.add(path + (key,), f"{key}: {missing}")
            return ""
    return ref


def _undefined(file: Path, attr: str) -> str:
    """Why ``attr`` is not a name ``file`` defines at its top level, with the nearest one it does ('' where it is,
    or where the file alone cannot say: a module ``__getattr__``, a star import, a file Python cannot parse, left
    to its import to report). Read, not imported: a misspelled name is said at once, not after torch loads."""
    import ast
    import difflib

    try:
        tree = ast.parse(file.read_text(encoding="utf-8"))
    except (SyntaxError, OSError, UnicodeDecodeError, ValueError):
        return ""
    names: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:  # top-level statements, and those inside top-level if / try / with blocks
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return ""
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        for field in ("body", "orelse", "finalbody", "handlers"):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                todo.extend(getattr(node, field, []) or [])
    head = attr.split(".")[0]
    if head in names or "__getattr__" in names:
        return ""
    close = difflib.get_close_matches(head, sorted(names), n=1)
    return f"{file.name} defines no {head!r}" + (f"; did you mean {close[0]!r}?" if close else "")


def kernel_entries(
    chk: Checker, section: Any, targets: tuple[str, ...], timeout_s: float, base_dir: Path
) -> list[KernelEntry]:
    """A run matrix's ``compiled:`` section as kernel entries: one per kernel Inductor generates for an entry
    (``entry.kernel_name``), with the configs its heuristics give on each target for each shape and dtype where
    the kernel is part of that target's graph; a kernel that one target's graph lacks has no case there. Each
    entry is captured under every target's face (remembered on disk, :func:`harness.intake.inductor.compiled_probe.
    remembered`); a capture that fails is a failed case on that target, shape and dtype (:func:`failed_entry`),
    never the whole matrix's refusal: one model entry that cannot capture costs no other case its result."""
    from importlib import metadata

    from harness.intake.inductor import inductor_face
    from harness.intake.virtual_device import face

    made = requests(chk, section, base_dir)
    if not made or not targets:
        return []
    refused = face.refusal(targets, "compiled:")
    if refused:
        chk.add(("targets",), refused)
        return []
    try:
        torch = metadata.version("torch")
        inductor_face.check_torch(torch)
    except metadata.PackageNotFoundError:
        chk.add(("compiled",), "compiled entries need torch (its TorchInductor), which is not installed")
        return []
    except inductor_face.InductorFaceError as exc:
        chk.add(("compiled",), str(exc))
        return []
    tables, failures = captures(made, targets)
    out = []
    for request in made:
        out += entries_of(request, tables[request.name], torch, timeout_s)
        mine = [f for f in failures if f.entry == request.name]
        if mine:  # one failed case per target, shape and dtype it could not be captured for; the rest stand
            out.append(failed_entry(request, mine, timeout_s))
    return out


def failed_entry(request: Request, failures: list["CaptureFailure"], timeout_s: float) -> KernelEntry:
    """The cases of an entry's failed captures: ``entry.capture`` on each target, shape and dtype that failed,
    each failing with its line (:class:`~harness.model.kernel_refs.CaptureFailedRef`)."""
    from harness.matrix.entry import shape_key
    from harness.model import targets as catalogue
    from harness.model.kernel_refs import CaptureFailedRef

    why: dict[tuple[str, str, str], str] = {}
    for failure in failures:
        for shape, dtype in failure.pairs:
            why.setdefault((failure.target, shape_key(shape), dtype), failure.said)
    ref = CaptureFailedRef(request.name, request.ref, tuple(why.items()))
    launched = tuple(
        (key, (ConfigEntry((), catalogue.get(key[0]).vendor),)) for key in why
    )  # one config-less record each: nothing was built
    return _entry(request, "capture", ref.encode(), launched, timeout_s)


def _entry(
    request: Request,
    kernel: str,
    ref: str,
    launched: tuple[tuple[tuple[str, str, str], tuple[ConfigEntry, ...]], ...],
    timeout_s: float,
) -> KernelEntry:
    """``request.name.kernel``: its configs per (target, shape, dtype) are what ``launched`` says."""
    return KernelEntry(
        name=f"{request.name}.{kernel}",
        ref=ref,
        dtypes=request.dtypes,
        shapes=tuple(tuple(s.items()) for s in request.shapes),
        configs=(),
        interpret=(),
        timeout_s=timeout_s,
        launched=launched,
    )


@dataclass(frozen=True)
class CaptureFailure:
    """One entry's capture that failed on a target: on which shape (its index in the entry's shapes; None for the
    whole entry, such as a child that hung or an import that failed), the shapes and dtypes it leaves without
    kernels, and the line that says so."""

    entry: str
    shape_at: int | None
    said: str
    target: str
    pairs: tuple[tuple[dict[str, int], str], ...]


Tables = dict[str, list[tuple[str, dict[str, int], str, CapturedGraph]]]


def captures(requests: list[Request], targets: list[str] | tuple[str, ...]) -> tuple[Tables, list[CaptureFailure]]:
    """Each entry's capture tables (target, shape, dtype, table) on every target, each remembered on disk
    (:func:`harness.intake.inductor.compiled_probe.remembered`: the run reads the same captures), and every failure, in
    the order met: what ``harness run`` makes failed cases of and ``harness compiled`` leaves out."""
    from harness.intake.inductor.compiled_probe import remembered

    tables: Tables = {r.name: [] for r in requests}
    failures: list[CaptureFailure] = []
    for target in targets:
        for request, outcome in zip(requests, remembered(requests, target)):
            if outcome.why:
                failures.append(CaptureFailure(request.name, None, outcome.why, target, tuple(request.pairs())))
                continue
            for shape, dtype, table in outcome.tables:
                if isinstance(table, str):
                    at = request.shapes.index(shape) if shape in request.shapes else 0
                    said = f"compiled entry {request.name} on {target} for {shape} {dtype}: {table}"
                    failures.append(CaptureFailure(request.name, at, said, target, ((shape, dtype),)))
                else:
                    tables[request.name].append((target, shape, dtype, table))
    return tables, failures


def entries_of(
    request: Request,
    tables: list[tuple[str, dict[str, int], str, CapturedGraph]],
    torch: str,
    timeout_s: float,
    op_reference: str | None = None,
) -> list[KernelEntry]:
    """One kernel entry per kernel of the captures' ``tables`` (target, shape, dtype, capture table).
    ``op_reference``: the kernels are an ``op:``'s compiled regions' (:func:`harness.matrix.ops_entries.
    region_entries`), ``request.ref`` the op a GPU calls as is, this its reference ("" where the op has none)."""
    from harness.intake.inductor import inductor_ref
    from harness.matrix.entry import shape_key
    from harness.model import targets as catalogue

    slots: dict[str, list[inductor_ref.Slot]] = {}
    launched: dict[str, list[tuple[tuple[str, str, str], tuple[ConfigEntry, ...]]]] = {}
    tunables: dict[str, set[str]] = {}
    for target, shape, dtype, table in tables:
        graph = tuple(k.name for k in table.kernels)
        choices = sum(len(c) for c in table.choices)
        vendor = catalogue.get(target).vendor
        for position, kernel in enumerate(table.kernels, start=1):
            configs = kernel.configs + kernel.coordesc  # the tuner's candidates, after the list
            first = kernel.launches[0] if kernel.launches else None
            grids = tuple(
                (json.dumps(dict(sorted(c.items())), sort_keys=True), g)
                for c, g in zip(configs, first.grids if first else ())
            )
            checks = [kernel.check_of(i) for i in range(len(configs))]  # a config the capture did not check: None
            key = (target, shape_key(shape), dtype)
            slots.setdefault(kernel.name, []).append(
                inductor_ref.Slot(
                    *key,
                    inductor_ref.store(kernel.source),
                    position,
                    graph,
                    kernel.heuristic,
                    grids,
                    choices,
                    first.numels if first else (),
                    table.attention,
                    table.conv_layout,
                )
            )
            entries = [ConfigEntry(tuple(c.items()), vendor, k) for c, k in zip(kernel.configs, checks)]
            entries += [
                ConfigEntry(tuple(c.items()), "coordesc", k)
                for c, k in zip(kernel.coordesc, checks[len(kernel.configs) :])
            ]
            launched.setdefault(kernel.name, []).append((key, tuple(entries)))
            tunables.setdefault(kernel.name, set()).update(kernel.constexprs)
    out = []
    for name, kernel_slots in slots.items():
        ref = inductor_ref.InductorRef(
            request.name, request.ref, request.inputs, request.factory, request.options, name,
            request.mode or "default", torch, tuple(sorted(tunables[name])), tuple(kernel_slots), request.dynamic,
            op_reference is not None, op_reference or "",
        )  # fmt: skip
        out.append(_entry(request, name, ref.encode(), tuple(launched[name]), timeout_s))
    return out
