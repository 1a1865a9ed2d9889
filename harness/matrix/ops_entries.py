"""Matrix entries with ``op:``: validated, captured once per shape and dtype, one kernel entry per launched kernel.

Kept apart from :mod:`harness.matrix.reading` because it runs the library's op (torch and the library are imported in
the process that reads the matrix; the import is probed in a child first, as for a spec file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.matrix import loader, ops
from harness.support.checking import Checker, is_a


def op_refs(
    chk: Checker,
    name: str,
    entry: dict[str, Any],
    path: tuple[Any, ...],
    base_dir: Path | None,
    import_env: tuple[tuple[str, str], ...] = (),
) -> list[tuple[str, str]]:
    """[(entry name, op reference)] for each kernel the op launches; problems go to ``chk`` (then [])."""
    if "source" in entry:
        chk.add(
            path + ("source",), f"kernel {name!r} gives both 'source' (a spec) and 'op' (a captured op): choose one"
        )
        return []
    for key in ("op", "inputs"):
        if not isinstance(entry.get(key), str):
            chk.add(path, f"kernel {name!r} with an op needs '{key}: file.py:ATTR' or '{key}: module:ATTR'")
            return []
    refs: dict[str, str] = {}
    for key in ("op", "inputs", "reference"):
        if key in entry:
            try:
                refs[key] = loader.resolve(name, str(entry[key]), None, base_dir)
            except loader.KernelLoadError as exc:
                chk.add(path + (key,), str(exc))
                return []
    shapes = entry.get("shapes") if isinstance(entry.get("shapes"), list) else []
    dtypes = entry.get("dtypes") if isinstance(entry.get("dtypes"), list) else []
    if not shapes or not dtypes:
        chk.add(path, f"kernel {name!r} needs non-empty 'shapes' and 'dtypes' lists")
        return []
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
            return []
        if keys is not None and set(shape) != keys:
            chk.add(path + ("shapes", i), f"every shape of op {name!r} has the same fields ({', '.join(sorted(keys))})")
            return []
        keys = set(shape)
    from harness.matrix import op_probe

    # the modules imported and the op captured in a child, never here: a hang, exit or crash is this line
    why, captured = op_probe.check(str(entry["op"]), refs, shapes, [str(d) for d in dtypes], import_env)
    if why or captured is None:
        chk.add(path + ("op",), why)
        return []
    if captured.import_error:
        key, said = captured.import_error
        chk.add(path + (key,), said)
        return []
    found: list[str] | None = None
    for shape, dtype, names in captured.captures:
        i = shapes.index(shape) if shape in shapes else 0
        if isinstance(names, str):
            chk.add(path + ("shapes", i), f"capturing op {entry['op']} for {shape} {dtype} failed: {names}")
            return []
        if found is not None and list(names) != found:
            chk.add(
                path + ("shapes", i),
                f"op {entry['op']} launches {', '.join(names)} for {shape} {dtype} but "
                f"{', '.join(found)} for the first shape and dtype: give the shapes "
                "that take each path as entries of their own",
            )
            return []
        found = list(names)
    assert found is not None
    first = tuple(shapes[0].items())
    return [
        (
            name if len(found) == 1 else f"{name}.{kernel}",
            ops.OpRef(refs["op"], refs["inputs"], refs.get("reference", ""), kernel, first, str(dtypes[0])).encode(),
        )
        for kernel in found
    ]
