"""The harness's imports point one way: each stage package imports only the stages README's architecture map puts
below it, no module imports (directly or through others) a module that imports it back, and no package is in a cycle
with another. Read from the source's syntax trees, imports inside functions included (a lazy import is still a
dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent / "harness"


def _modules() -> dict[str, Path]:
    out = {}
    for path in HARNESS.rglob("*.py"):
        if "_bundled" in path.parts:
            continue
        parts = path.relative_to(HARNESS.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "harness":
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    graph[name].add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules)
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in graph:
                continue
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else module


#: what each stage may import besides itself (README, "Architecture"): the pipeline
#: matrix -> build -> device -> execution -> pytest_plugin, the store (results) and the findings (analysis) beside it,
#: renderers above analysis, the command line above everything.
BASE = {"harness.support", "harness.model"}
ALLOWED: dict[str, set[str]] = {
    "harness.support": set(),
    "harness.model": {"harness.support"},
    "harness.authoring": BASE,
    "harness.results": BASE,
    # user code taken in (modules, probes, virtual devices, op and compiled capture): below the matrix reader
    "harness.intake": BASE | {"harness.authoring"},
    "harness.matrix": BASE | {"harness.authoring", "harness.intake"},
    "harness.compiling": BASE | {"harness.authoring", "harness.intake", "harness.matrix"},
    "harness.device": BASE | {"harness.authoring", "harness.intake", "harness.matrix", "harness.compiling"},
    "harness.execution": BASE
    | {"harness.authoring", "harness.intake", "harness.matrix", "harness.compiling", "harness.device"},
    "harness.analysis": BASE | {"harness.results"},
    "harness.render": BASE | {"harness.results", "harness.analysis"},
    "harness.tuning": BASE | {"harness.matrix"},
    # the adapter: hooks, items, session, progress, writer; the stages it drives, never build or device directly
    "harness.pytest_plugin": BASE
    | {
        "harness.authoring",
        "harness.intake",
        "harness.matrix",
        "harness.execution",
        "harness.tuning",
        "harness.results",
        "harness.analysis",
        "harness.render",
    },
    "harness.cli": {"*"},  # nothing imports it
    # the package's own face: harness (its version), python -m harness, and the two names kernel files import
    "harness": set(),
    "harness.__main__": {"harness.cli"},
    "harness.spec": {"harness.authoring"},
    "harness.torchutil": {"harness.authoring"},
}


def _package_edges() -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, targets in _graph(_modules()).items():
        packages.setdefault(_package(module), set()).update(_package(t) for t in targets)
    for name, targets in packages.items():
        targets.discard(name)
    return packages


def test_every_stage_imports_only_the_stages_below_it() -> None:
    edges = _package_edges()
    assert set(edges) == set(ALLOWED), "a package the map does not know (add it to ALLOWED and README)"
    wrong = sorted(
        f"{a} imports {b}"
        for a, targets in edges.items()
        for b in targets
        if "*" not in ALLOWED[a] and b not in ALLOWED[a]
    )
    assert wrong == []


def test_no_module_is_in_an_import_cycle() -> None:
    assert _cycles(_graph(_modules())) == []


def test_no_package_is_in_an_import_cycle() -> None:
    assert _cycles(_package_edges()) == []


def test_the_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_name_imported_from_the_harness_exists() -> None:
    """A lazy ``from harness.x import name`` inside a function fails only when that line runs (a linter cannot
    see a name that moved): every such import, at any depth, in the harness and in the tests, benchmarks, CI
    scripts and kernels that use it, names something its module defines."""
    import importlib

    modules = _modules()
    root = HARNESS.parent
    users = [
        *modules.values(),
        *(root / "tests").rglob("*.py"),
        *(root / "benchmarks").glob("*.py"),
        *(root / "ci").glob("*.py"),
        *(root / "kernels").glob("*.py"),
    ]
    missing = []
    for path in users:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "harness":
                target = importlib.import_module(node.module)
                missing += [
                    f"{path.name}:{node.lineno}: {node.module}.{a.name}"
                    for a in node.names
                    if not hasattr(target, a.name) and f"{node.module}.{a.name}" not in modules
                ]
    assert missing == []


def test_readme_map_is_the_tree_and_the_rule() -> None:
    """docs/architecture.md's table names every stage package of ``harness/`` and, for each, exactly the stages
    this test allows it to import: the map a reader sees is the rule the check enforces."""
    import re

    readme = (HARNESS.parent / "docs" / "architecture.md").read_text()
    table = readme.split("<!-- architecture -->")[1].split("<!-- /architecture -->")[0]
    rows = [line.split("|")[1:-1] for line in table.strip().splitlines()[2:]]
    stated = {
        f"harness.{name.strip().strip('`')}": {f"harness.{x}" for x in re.findall(r"[a-z_]+", may)}
        for name, _, may in rows
    }
    folders = {f"harness.{p.name}" for p in HARNESS.iterdir() if (p / "__init__.py").is_file() and p.name != "_bundled"}
    assert set(stated) == folders
    for name, allowed in ALLOWED.items():
        if name not in stated:
            continue
        words = stated[name]
        if name == "harness.cli":
            assert words == {"harness.everything"}
        elif words == {"harness.nothing"}:
            assert allowed == set()
        else:
            assert words == allowed, name


def test_no_module_is_longer_than_350_lines() -> None:
    """A module is one thing a reader can hold (README, "Architecture"): past 350 lines it is split."""
    long = {
        str(p.relative_to(HARNESS.parent)): n
        for p in _modules().values()
        if (n := len(p.read_text().splitlines())) > 350
    }
    assert long == {}


def test_the_stores_vocabulary_is_the_models() -> None:
    """``harness.results.schema`` refuses a file before the harness loads, so it keeps its own sets of modes and
    statuses: they are the model's ``Literal`` types, word for word."""
    from harness.model import vocabulary
    from harness.results import schema

    assert schema.MODES == vocabulary.MODES and schema.STATUSES == vocabulary.STATUSES
    assert vocabulary.INTERPRET_UNSUPPORTED in vocabulary.STATUSES


def test_the_zygote_roles_name_only_modules_and_functions_that_exist() -> None:
    """``harness.support.zygote_roles`` names, as strings the syntax trees above cannot show, what each zygote
    imports before it forks (harness modules of every stage, pytest's private plugins, libraries) and the entry and
    warm-up functions its children run. A zygote is a process entry point like ``python -m``: it may name any stage,
    as ``cli`` may import any. What holds it here: every name is a module this installation has (a renamed harness
    module or a pytest release without one of its plugins fails here, not as a zygote that dies at start), each
    function is in its module, and only the serving module reads the table."""
    import importlib
    import importlib.util

    from harness.support.zygote_roles import ROLES

    problems = []
    for role, spec in ROLES.items():
        for module in spec.preload:
            if importlib.util.find_spec(module) is None:
                problems.append(f"{role}: preloads {module}, which is not installed")
        for target in (spec.entry, *spec.warm):
            module, _, function = target.partition(":")
            if module.split(".")[0] != "harness" or module not in _modules():
                problems.append(f"{role}: runs {target}, not a harness module")
            elif not callable(getattr(importlib.import_module(module), function, None)):
                problems.append(f"{role}: runs {target}, which {module} does not define")
    readers = sorted(m for m, imported in _graph(_modules()).items() if "harness.support.zygote_roles" in imported)
    assert readers == ["harness.support.zygote"], readers
    assert not problems, "\n".join(problems)


#: harness.intake's rooms: the virtual device (faces, fake tensors, device values, the attention and convolution
#: decisions), under both captures; a library's launches, whose ops may call torch.compile regions (Inductor's
#: room); Inductor's capture and its checks. The face installs the launch capture's benchmarker and the regions'
#: recorder into the libraries it fronts (lazily, at wear time): those edges are named below, so that no other
#: crosses a room's wall unseen.
ROOMS = ("harness.intake.virtual_device", "harness.intake.launches", "harness.intake.inductor")
#: the modules every room shares, at harness.intake's top: running user code in a child, importing and loading it
SHARED = {"callback_probe", "child_probe", "facts", "importing", "loader"}
#: the edges between rooms as they are, module to module (a new one is a decision: add it here, said why)
CROSSING = {
    ("harness.intake.virtual_device.face", "harness.intake.inductor.compiled_regions"),
    ("harness.intake.virtual_device.face", "harness.intake.launches.capture"),
    ("harness.intake.launches.capture", "harness.intake.inductor.compiled_regions"),
    ("harness.intake.launches.ops", "harness.intake.inductor.compiled_regions"),
    ("harness.intake.launches.ops", "harness.intake.inductor.region_check"),
    ("harness.intake.inductor.compiled_probe", "harness.intake.launches.op_probe"),
}


def test_intake_is_in_rooms_and_only_the_named_edges_cross_their_walls() -> None:
    modules = _modules()
    intake = [m for m in modules if m.startswith("harness.intake.")]
    loose = sorted(
        m for m in intake if m.count(".") == 2 and m.split(".")[2] not in SHARED | {r.split(".")[2] for r in ROOMS}
    )
    assert loose == [], "a module of harness.intake in no room (put it in one, or name it shared)"
    room_of = {m: next((r for r in ROOMS if m == r or m.startswith(r + ".")), None) for m in intake}
    crossing = {
        (a, b)
        for a, targets in _graph(modules).items()
        if room_of.get(a)
        for b in targets
        if room_of.get(b) and room_of[b] != room_of[a] and room_of[b] != "harness.intake.virtual_device"
    }
    assert crossing == CROSSING  # the virtual device is under both captures: their imports of it are its use
