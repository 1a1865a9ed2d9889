"""Private torch names: one module imports them or reaches them as attributes (harness/support/torchcompat.py),
and each of its accessors resolves on the installed torch, so a torch release that moves one fails here by name,
not mid-capture."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "harness"
COMPAT = HARNESS / "support" / "torchcompat.py"


def _private_imports(path: Path) -> list[str]:
    """``import torch._x`` / ``from torch._x import y`` / ``from torch.a import _y``: each private name a module
    imports from torch, inside functions too (a lazy import is still an import)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("torch.") and "._" in "." + a.name[6:]]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "torch":
            parts = node.module.split(".")
            if any(p.startswith("_") for p in parts) or any(a.name.startswith("_") for a in node.names):
                found += [f"{node.module}:{a.name}" for a in node.names]
    return found


def test_one_module_imports_private_torch_names() -> None:
    importers = {
        str(p.relative_to(HARNESS)): names
        for p in sorted(HARNESS.rglob("*.py"))
        if "_bundled" not in p.parts and (names := _private_imports(p))
    }
    assert list(importers) == ["support/torchcompat.py"], importers
    assert len(importers["support/torchcompat.py"]) >= 12  # the scan sees them where they are


def _private_attributes(path: Path) -> list[str]:
    """``torch._C``, ``torch.cuda._exchange_device``, ``torch.ops.aten._x``: each private attribute a module reaches
    from the name ``torch`` (read, set or tested), however deep."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute):
            chain, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if (
                isinstance(base, ast.Name)
                and base.id == "torch"
                and any(a.startswith("_") and not a.startswith("__") for a in chain)
            ):
                found.append(".".join(["torch", *reversed(chain)]))
    return found


def test_one_module_reaches_private_torch_attributes() -> None:
    """Not only imports: a private name set or read as an attribute (the CUDA runtime's stubs, ATen's fused
    attention ops, ``DisableTorchFunction``) lives in torchcompat too."""
    reaching = {
        str(p.relative_to(HARNESS)): sorted(set(names))
        for p in sorted(HARNESS.rglob("*.py"))
        if "_bundled" not in p.parts and (names := _private_attributes(p))
    }
    assert list(reaching) == ["support/torchcompat.py"], reaching
    assert "torch._C._cuda_getCurrentRawStream" not in reaching["support/torchcompat.py"]  # reached via an alias
    assert "torch._C" in reaching["support/torchcompat.py"]


def _patches_of_torchcompat_objects(path: Path) -> list[str]:
    """Assignments to an attribute of something a torchcompat accessor returned (``x = torchcompat.f()`` then
    ``x.y = ...``, or ``torchcompat.f().y = ...``): a patch of torch's internals made outside torchcompat."""
    tree = ast.parse(path.read_text())

    def from_compat(node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        # wrapper_subclass makes a tensor of the harness's own subclass: its attributes are the harness's
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "torchcompat"
                and node.func.attr != "wrapper_subclass")  # fmt: skip

    bound = {
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and from_compat(node.value)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        )
        for t in targets:
            if not isinstance(t, ast.Attribute):
                continue
            root = t.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if (isinstance(root, ast.Name) and root.id in bound) or from_compat(t.value):
                found.append(f"line {t.lineno}: {ast.unparse(t)}")
    return found


def test_every_patch_of_torch_s_internals_is_made_in_torchcompat() -> None:
    """What the harness replaces in Inductor, Dynamo and FakeTensor (an autotuner's methods, the wrapper's
    allocators, max-autotune's benchmark, ``compile_fx``, a driver switch) is named in torchcompat; a module that
    reaches an internal through an accessor and assigns into it is listed here."""
    patching = {
        str(p.relative_to(HARNESS)): names
        for p in sorted(HARNESS.rglob("*.py"))
        if "_bundled" not in p.parts and p != COMPAT and (names := _patches_of_torchcompat_objects(p))
    }
    assert patching == {}, patching
    assert _patches_of_torchcompat_objects(Path(__file__).with_name("data") / "torchcompat_patch_sample.py")


def test_every_private_name_resolves_on_this_torch() -> None:
    pytest.importorskip("torch")
    from harness.support import torchcompat

    for accessor in torchcompat.ACCESSORS:
        assert accessor() is not None, accessor.__name__
    assert torchcompat.triton_hash_to_path_key("ab" * 32)
    assert torchcompat.triton_cache_dir(0)
    assert "max_autotune" in torchcompat.list_mode_options("max-autotune")
    heuristics = torchcompat.triton_heuristics()
    assert hasattr(heuristics, "CachingAutotuner") and hasattr(heuristics, "GridExpr")
    assert hasattr(torchcompat.fake_tensor(), "init_gpu_context")
    for backend in torchcompat.ATTENTION_OPS:
        assert torchcompat.attention_op(backend) is not None, backend
    assert isinstance(torchcompat.gpu_runtime_built(), bool)
    with torchcompat.disable_torch_function():
        pass
    with torchcompat.pop_mode_temporarily() if _mode_active() else _nothing():
        pass


def _mode_active() -> bool:
    import torch

    return bool(torch._C._len_torch_function_stack())


def _nothing():  # type: ignore[no-untyped-def]
    import contextlib

    return contextlib.nullcontext()
