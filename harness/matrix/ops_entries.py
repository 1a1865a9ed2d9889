"""Matrix entries with ``op:``: validated, captured per target, shape and dtype, one kernel entry per distinct launch.

Each target's capture runs in a child that wears that target's virtual device (:mod:`harness.intake.launches.op_probe`),
so each target's configs are the ones the library launches there. ``launches_from: h100`` asks the cross-vendor
question on purpose: every target builds the launches the library makes on that one target (the records say
so). A launch of a kernel that the op makes twice with other constexprs is an entry of its own
(``name.kernel.launch2``), built and judged like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.intake import loader
from harness.intake.launches import op_probe, ops
from harness.matrix.configs import ConfigEntry
from harness.matrix.entry import KernelEntry, shape_key
from harness.support.checking import Checker, is_a

#: (face target, shape as JSON, dtype) -> the configs the op launches there
Launched = tuple[tuple[tuple[str, str, str], tuple[ConfigEntry, ...]], ...]


@dataclass(frozen=True)
class OpEntry:
    """One distinct launch of a kernel by the op: its entry name, its reference, what it launches per target."""

    name: str
    ref: str
    launched: Launched
    first_face: str  # the face the entry's spec facts are read under


@dataclass(frozen=True)
class OpRequest:
    """An ``op:`` entry as checked before anything is captured: its resolved refs, shapes, dtypes and the targets
    whose faces capture it (``launches_from``'s one, or every target's)."""

    op: str
    refs: tuple[tuple[str, str], ...]
    shapes: tuple[dict[str, int], ...]
    dtypes: tuple[str, ...]
    faces: tuple[str, ...]

    def probe(self, target: str, import_env: tuple[tuple[str, str], ...]) -> op_probe.Request:
        return op_probe.Request(self.op, self.refs, self.shapes, self.dtypes, import_env, target)


def op_request(
    chk: Checker,
    name: str,
    entry: dict[str, Any],
    path: tuple[Any, ...],
    base_dir: Path | None,
    targets: tuple[str, ...] = (),
) -> OpRequest | None:
    """What capturing the entry takes, checked; problems go to ``chk`` (then None)."""
    if "source" in entry:
        chk.add(
            path + ("source",), f"kernel {name!r} gives both 'source' (a spec) and 'op' (a captured op): choose one"
        )
        return None
    for key in ("op", "inputs"):
        if not isinstance(entry.get(key), str):
            chk.add(path, f"kernel {name!r} with an op needs '{key}: file.py:ATTR' or '{key}: module:ATTR'")
            return None
    refs: dict[str, str] = {}
    for key in ("op", "inputs", "reference"):
        if key in entry:
            try:
                refs[key] = loader.resolve(name, str(entry[key]), None, base_dir)
            except loader.KernelLoadError as exc:
                chk.add(path + (key,), str(exc))
                return None
    shapes = entry.get("shapes") if isinstance(entry.get("shapes"), list) else []
    dtypes = entry.get("dtypes") if isinstance(entry.get("dtypes"), list) else []
    if not shapes or not dtypes:
        chk.add(path, f"kernel {name!r} needs non-empty 'shapes' and 'dtypes' lists")
        return None
    keys = None
    for i, shape in enumerate(shapes):
        if (
            not isinstance(shape, dict)
            or not shape
            or not all(isinstance(k, str) and is_a(v, int) and v > 0 for k, v in shape.items())
        ):
            chk.add(
                path + ("shapes", i),
                f"a shape of op {name!r} is a mapping of names to positive integers "
                f"(what the inputs function reads), got {shape!r}",
            )
            return None
        if keys is not None and set(shape) != keys:
            chk.add(path + ("shapes", i), f"every shape of op {name!r} has the same fields ({', '.join(sorted(keys))})")
            return None
        keys = set(shape)
    source = entry.get("launches_from")
    if source is not None and (not isinstance(source, str) or source not in targets):
        chk.add(
            path + ("launches_from",),
            f"launches_from names one of the matrix's targets whose launches every target builds "
            f"({', '.join(targets)}), got {source!r}",
        )
        return None
    faces = (source,) if source else tuple(targets)
    return OpRequest(str(entry["op"]), tuple(sorted(refs.items())), tuple(shapes), tuple(map(str, dtypes)), faces)


def capture_together(requests: list[tuple[OpRequest, tuple[tuple[str, str], ...]]]) -> None:
    """Capture every op of a matrix (each with its ``import_env``) before its entries are read: one child per target
    face and variables (:func:`harness.intake.launches.op_probe.prefetch`), the faces in each entry's order; an entry whose
    capture failed on one face is not captured on the next (its error names the first)."""
    failed: set[int] = set()
    for round_ in range(max((len(r.faces) for r, _ in requests), default=0)):
        asked = [(n, r.probe(r.faces[round_], env)) for n, (r, env) in enumerate(requests) if round_ < len(r.faces)]
        op_probe.prefetch([p for n, p in asked if n not in failed])
        for n, probe in asked:
            if n in failed:
                continue
            why, captured = op_probe.check(
                probe.op, dict(probe.refs), list(probe.shapes), list(probe.dtypes), probe.import_env, probe.target
            )
            if why or captured is None or captured.import_error:
                failed.add(n)


def op_refs(
    chk: Checker,
    name: str,
    entry: dict[str, Any],
    path: tuple[Any, ...],
    base_dir: Path | None,
    import_env: tuple[tuple[str, str], ...] = (),
    targets: tuple[str, ...] = (),
) -> list[OpEntry]:
    """One entry per distinct launch the op makes; problems go to ``chk`` (then [])."""
    request = op_request(chk, name, entry, path, base_dir, targets)
    if request is None:
        return []
    refs, shapes, dtypes, faces = dict(request.refs), list(request.shapes), list(request.dtypes), request.faces
    tables: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    order: list[tuple[str, int, int]] | None = None
    for target in faces:
        # the modules imported and the op captured in a child wearing the target's face, never here
        why, captured = op_probe.check(str(entry["op"]), refs, shapes, [str(d) for d in dtypes], import_env, target)
        if why or captured is None:
            chk.add(path + ("op",), why)
            return []
        if captured.import_error:
            key, said = captured.import_error
            chk.add(path + (key,), f"{said} (imported as on {target})")
            return []
        for shape, dtype, table in captured.captures:
            i = shapes.index(shape) if shape in shapes else 0
            if isinstance(table, str):
                chk.add(
                    path + ("shapes", i),
                    f"capturing op {entry['op']} as on {target} for {shape} {dtype} failed: {table}",
                )
                return []
            made = [(la["kernel"], la["launch"], la["of"]) for la in table["launches"]]
            if order is not None and made != order:
                chk.add(
                    path + ("shapes", i),
                    f"op {entry['op']} makes {_launches(made)} as on {target} for {shape} {dtype} but "
                    f"{_launches(order)} for the first target, shape and dtype: give the shapes "
                    "that take each path as entries of their own",
                )
                return []
            order = made
            tables.setdefault(target, {})[(shape_key(shape), dtype)] = table
    assert order is not None
    kernels = {k for k, _, _ in order}
    out = []
    for index, (kernel, launch, of) in enumerate(order):
        entry_name = name if len(kernels) == 1 else f"{name}.{kernel}"
        if of > 1:
            entry_name += f".launch{launch}"
        launched = tuple(
            (
                (target, key[0], key[1]),
                tuple(
                    ConfigEntry(tuple(sorted(c.items())), _vendor(target)) for c in table["launches"][index]["configs"]
                ),
            )
            for target, by_key in tables.items()
            for key, table in by_key.items()
        )
        first = tuple(shapes[0].items())
        ref = ops.OpRef(
            refs["op"], refs["inputs"], refs.get("reference", ""), kernel, first, str(dtypes[0]), launch
        ).encode()
        out.append(OpEntry(entry_name, ref, launched, faces[0]))
    return out


def region_entries(
    chk: Checker,
    name: str,
    entry: dict[str, Any],
    path: tuple[Any, ...],
    base_dir: Path | None,
    import_env: tuple[tuple[str, str], ...],
    targets: tuple[str, ...],
    timeout_s: float,
) -> list[KernelEntry]:
    """The kernels the op's ``torch.compile`` regions launch, one entry each (``name.kernel``), built and judged as
    a ``compiled:`` entry's are (:func:`harness.matrix.compiled_entries.entries_of`): Inductor's configs on each
    target, their host checks, the op itself what a GPU calls. Read from the captures :func:`op_refs` made (the
    same children, remembered); after a problem there, none."""
    from importlib import metadata

    from harness.intake.inductor.captured import CapturedGraph
    from harness.intake.inductor.compiled_probe import Request
    from harness.matrix import compiled_entries

    request = op_request(chk, name, entry, path, base_dir, targets)
    if request is None:
        return []
    refs = dict(request.refs)
    tables = []
    for target in request.faces:
        why, captured = op_probe.check(request.op, refs, list(request.shapes), list(request.dtypes), import_env, target)
        if why or captured is None or captured.import_error:
            return []
        for shape, dtype, table in captured.captures:
            if isinstance(table, str):
                return []
            if table.get("compiled"):  # the op's regions' kernels, as a compiled capture's graph
                tables.append((target, shape, dtype, CapturedGraph.of({"kernels": table["compiled"]})))
    if not tables:
        return []
    made = Request(name, refs["op"], refs["inputs"], request.shapes, request.dtypes)
    torch = metadata.version("torch")
    return compiled_entries.entries_of(made, tables, torch, timeout_s, op_reference=refs.get("reference", ""))


def _vendor(target: str) -> str:
    from harness.model import targets

    return targets.get(target).vendor


def _launches(made: list[tuple[str, int, int]]) -> str:
    return ", ".join(f"{k}" + (f" (launch {n} of {of})" if of > 1 else "") for k, n, of in made)
