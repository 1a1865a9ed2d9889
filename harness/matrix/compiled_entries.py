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
        options: {}                     # optional: Inductor options on top

Each problem is one ``file:line: message`` (collected, never the first only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.intake import loader
from harness.intake.compiled_probe import Request
from harness.support.checking import Checker

KEYS = {"fn", "inputs", "shapes", "dtypes", "factory", "mode", "options", "reference"}
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
    return ref
