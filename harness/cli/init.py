"""``harness init KERNEL``: a first matrix for a kernel file or an op, the door a newcomer who holds a ``.py`` file
and no matrix is looking for.

The file is read as text (Python's ``ast``), never imported: the harness's own process runs no user code. What
it finds decides the entry: each ``NAME = KernelSpec(...)`` of a file becomes a ``source: FILE:NAME`` entry with
the spec's dtypes and one shape of its dims; a function (``FILE.py:FUNC``, or ``module:FUNC`` of an installed
library) becomes an ``op:`` entry, with an inputs module beside the matrix for the one function the op needs and
only its user can write. The matrix is a start (its shape sizes are placeholders to edit), and ``harness
validate`` says what is still missing."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import yaml

from harness.cli.common import EXIT_INPUT, EXIT_OK, err
from harness.render.escaping import plain

TARGETS = ("h100", "mi300x")
PLACEHOLDER = 1024  # each dim of the first shape: a size to edit, not a recommendation


def _literal_strings(call: ast.Call, keyword: str) -> list[str]:
    for kw in call.keywords:
        if kw.arg == keyword and isinstance(kw.value, (ast.Tuple, ast.List)):
            return [e.value for e in kw.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _specs(tree: ast.Module) -> dict[str, ast.Call]:
    """Module-level ``NAME = KernelSpec(...)`` (or ``spec.KernelSpec(...)``) assignments."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
            func, target = node.value.func, node.targets[0]
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name == "KernelSpec" and isinstance(target, ast.Name):
                found[target.id] = node.value
    return found


def _spec_name(call: ast.Call, source: Path) -> str:
    """The spec's own ``name=`` where it is a literal, else the file's stem."""
    for kw in call.keywords:
        if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return kw.value.value
    return source.stem


Entry = tuple[str, dict[str, object]]  # a kernel's name in the matrix, and its fields (YAML data)


def _spec_entry(kernel: str, source: str, call: ast.Call) -> Entry:
    dims = _literal_strings(call, "dims") or ["N"]
    dtypes = _literal_strings(call, "dtypes")[:1] or ["fp16"]
    return kernel, {"source": source, "dtypes": dtypes, "shapes": [{d: PLACEHOLDER for d in dims}]}


def _op_entry(kernel: str, op: str, inputs_module: str) -> Entry:
    return kernel, {"op": op, "inputs": f"{inputs_module}:inputs", "dtypes": ["fp16"], "shapes": [{"N": PLACEHOLDER}]}


HEADER = """\
# Written by `harness init`. Edit each kernel's shapes (the sizes here are placeholders; an op's shape fields are
# whatever its inputs function reads), and write the inputs function an op entry names. Then `harness validate`
# and `harness run` this file. docs/bring-your-kernel.md has every field.
"""

INPUTS = '''"""The arguments of an op for one shape of a matrix (harness init wrote this; complete it)."""

OP = {op!r}


def inputs(shape, dtype, device, generator):
    """Return OP's positional arguments for ``shape`` (a dict of the matrix's shape fields) and ``dtype``, tensors
    made on ``device`` with ``generator``, e.g. ``(randn((shape["N"],), dtype, device, generator),)`` with
    ``from harness.torchutil import randn``. See docs/bring-your-kernel.md, "Ops, captured"."""
    raise NotImplementedError("write the arguments of " + OP + " for a shape in this function")
'''


def _matrix_text(name: str, entries: list[Entry]) -> str:
    """The matrix as YAML written by the YAML library: names and paths are data, never spliced into the text."""
    doc = {"name": name, "targets": list(TARGETS), "kernels": dict(entries)}
    return HEADER + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)


def cmd_init(args: argparse.Namespace) -> int:
    target: str = args.kernel
    path_part, _, attr = target.rpartition(":") if not target.endswith(".py") else (target, "", "")
    if attr and not attr.isidentifier():
        err(f"init: {target!r}: {attr!r} after the last ':' is not a Python name (FILE.py:NAME or module:NAME)")
        return EXIT_INPUT
    out = Path(args.out) if args.out else Path(f"{Path(path_part).stem.replace('.', '_') or 'matrix'}.yaml")
    if out.exists():
        err(f"init: {out} exists; name another file with --out")
        return EXIT_INPUT
    entries: list[Entry] = []
    extra: dict[Path, str] = {}
    if path_part.endswith(".py"):
        source = Path(path_part)
        if not source.is_file():
            err(f"init: {source}: no such file")
            return EXIT_INPUT
        try:
            tree = ast.parse(source.read_text(), filename=str(source))
        except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
            err(f"init: {source}: not Python that parses ({type(exc).__name__}: {exc})")
            return EXIT_INPUT
        specs = _specs(tree)
        rel = _relative(source, out)
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        if attr and attr not in specs and attr in functions:  # a function of the file: an op
            inputs_file = out.with_name(f"{out.stem}_inputs.py")
            entries.append(_op_entry(attr, f"{rel}:{attr}", inputs_file.name))
            extra[inputs_file] = INPUTS.format(op=f"{rel}:{attr}")
        else:
            chosen = {attr: specs[attr]} if attr in specs else specs if not attr else {}
            if not chosen:
                kernels = sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.decorator_list)
                err(
                    f"init: {target}: no KernelSpec {'named ' + attr + ' ' if attr else ''}in it"
                    + (f" (its decorated functions: {', '.join(kernels)})" if kernels else "")
                    + "; a matrix names a KernelSpec or an op: docs/bring-your-kernel.md shows both"
                )
                return EXIT_INPUT
            entries += [_spec_entry(_spec_name(call, source), f"{rel}:{n}", call) for n, call in chosen.items()]
    elif attr:  # module:function of an importable library: an op
        inputs_file = out.with_name(f"{out.stem}_inputs.py")
        entries.append(_op_entry(attr, target, inputs_file.name))
        extra[inputs_file] = INPUTS.format(op=target)
    else:
        err(f"init: {target!r} is neither a .py file nor module:function")
        return EXIT_INPUT
    for path in extra:
        if path.exists():
            err(f"init: {path} exists; name another matrix with --out")
            return EXIT_INPUT
    name = out.stem
    out.write_text(_matrix_text(name, entries))
    for path, text in extra.items():
        path.write_text(text)
    written = ", ".join(str(p) for p in (out, *extra))
    print(plain(f"harness: wrote {written}; edit the shapes, then `harness validate {out}` and `harness run {out}`"))
    return EXIT_OK


def _relative(source: Path, matrix: Path) -> str:
    """``source`` as the matrix names it: relative to the matrix's folder where it can be."""
    try:
        return str(source.resolve().relative_to(matrix.resolve().parent))
    except ValueError:
        return str(source.resolve())
