"""One ``kernels:`` entry of a matrix, checked in full: its source or op, dtypes, shapes against the spec's
parameters, configs against each backend's compile options and ranges, the variables set before its import, its
timeout. Each problem is a ``file:line`` line (collected, never the first only)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

from harness.intake import facts, loader
from harness.intake.facts import SpecFacts
from harness.matrix.configs import configs_of
from harness.matrix.entry import KernelEntry
from harness.support.checking import Checker, is_a, seen_before, suggest

KERNEL_KEYS = {
    "source": str,
    "op": str,
    "inputs": str,
    "reference": str,
    "import_env": dict,
    "launches_from": str,
    "dtypes": list,
    "shapes": list,
    "configs": (list, str),
    "interpret": (list, bool),
    "timeout_s": (int, float),
    "compare_threshold": (int, float),
    "environments": dict,  # per target, for this kernel only (the matrix's otherwise)
}


MAX_TIMEOUT_S = 24 * 3600


def _check_shape(chk: Checker, spec: SpecFacts, shape: Any, path: tuple[Any, ...]) -> dict[str, Any] | None:
    if not isinstance(shape, dict):
        chk.add(path, f"shape must be a mapping of {', '.join(spec.dims)}, got {shape!r}")
        return None
    ok = True
    for key, value in shape.items():
        if key in spec.dims:
            if not is_a(value, int) or value <= 0:
                chk.add(path + (key,), f"shape field {key!r} of {spec.name} must be a positive integer, got {value!r}")
                ok = False
        elif key in spec.flags:
            if not isinstance(value, bool):
                chk.add(path + (key,), f"shape flag {key!r} of {spec.name} must be true or false, got {value!r}")
                ok = False
        else:
            chk.add(
                path + (key,),
                f"unknown shape field {key!r} for {spec.name} (fields: "
                f"{', '.join(spec.dims + spec.flags)}){suggest(key, spec.dims + spec.flags)}",
            )
            ok = False
    for dim in spec.dims:
        if dim not in shape:
            chk.add(path, f"shape of {spec.name} lacks {dim!r}")
            ok = False
    return spec.normalize_shape(shape) if ok else None


def entries_of(
    chk: Checker,
    name: str,
    entry: Any,
    backends: set[str],
    default_timeout: float,
    kernels_dir: Path | None,
    base_dir: Path | None = None,
    targets: tuple[str, ...] = (),
) -> list[KernelEntry]:
    """The entries of one ``kernels:`` item: one for a spec, one per kernel the op launches for an ``op:``."""
    path = ("kernels", name)
    if not isinstance(entry, dict):
        chk.add(path, f"kernel {name!r} must map to a mapping of {', '.join(KERNEL_KEYS)}")
        return []
    chk.keys(entry, path, KERNEL_KEYS, f"kernel {name!r}")
    import_env = import_env_of(chk, entry.get("import_env", {}), path + ("import_env",))
    if import_env is None:
        return []
    if "op" in entry or "inputs" in entry or "reference" in entry:
        from harness.matrix import ops_entries

        if "configs" in entry:
            chk.add(
                path + ("configs",),
                f"op {name!r}: its configs are the launches the library makes under each target's virtual device "
                "(its autotuner's, as Triton prunes them, or its own options); leave 'configs' out",
            )
            return []
        out = []
        for made in ops_entries.op_refs(chk, name, entry, path, base_dir, import_env, targets):
            face_env = face_env_of(import_env, made.first_face)
            parsed = _kernel_entry(chk, made.name, made.ref, entry, path, backends, default_timeout, face_env)
            if parsed:
                source = entry.get("launches_from")
                out.append(
                    # its facts are read under the first face; each target's cases wear their own (face_env)
                    dataclasses.replace(parsed, import_env=face_env, launched=made.launched, launches_from=source)
                )
        if not chk.problems:  # the kernels of its torch.compile regions, as a compiled entry's
            made_regions = ops_entries.region_entries(chk, name, entry, path, base_dir, import_env, targets,
                                                      default_timeout)  # fmt: skip
            out += [dataclasses.replace(e, import_env=import_env) for e in made_regions]
        return out
    else:
        source = entry.get("source") if isinstance(entry.get("source"), str) else None
        try:
            refs = [(name, loader.resolve(name, source, kernels_dir, base_dir))]
        except loader.KernelLoadError as exc:
            chk.add(path + (("source",) if source else ()), str(exc))
            return []
    out = []
    for kernel_name, ref in refs:
        parsed = _kernel_entry(chk, kernel_name, ref, entry, path, backends, default_timeout, import_env)
        if parsed:
            out.append(dataclasses.replace(parsed, import_env=import_env))
    return out


def face_env_of(import_env: tuple[tuple[str, str], ...], face: str) -> tuple[tuple[str, str], ...]:
    """The variables an op entry's spec facts are read under: its ``import_env`` and the face it was captured in."""
    return tuple(sorted(dict(import_env, HARNESS_FACE=face).items()))


#: variables the harness sets itself in its workers: an ``import_env`` may not override them
_HARNESS_VARIABLES = (
    "TRITON_INTERPRET",
    "PYTHONPATH",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "TRITON_CACHE_DIR",
    "HARNESS_FACE",
)


def import_env_of(chk: Checker, raw: Any, path: tuple[Any, ...]) -> tuple[tuple[str, str], ...] | None:
    """``import_env: {VAR: value}``: variables a library reads when it is imported (a vendor switch); never
    Triton's codegen variables, which are what ``environments`` sweeps and records per build."""
    from harness.model.environments import CODEGEN_VARIABLES

    if not isinstance(raw, dict):
        return None  # chk.keys said so
    codegen = {k for names in CODEGEN_VARIABLES.values() for k in names}
    out = []
    for key, value in raw.items():
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            chk.add(path + (key,), f"import_env names an environment variable, got {key!r}")
        elif key in codegen:
            chk.add(
                path + (key,),
                f"{key} is a Triton codegen variable: sweep it under 'environments' (per target, "
                "recorded per build), not 'import_env'",
            )
        elif key in _HARNESS_VARIABLES:
            chk.add(path + (key,), f"{key} is set by the harness in its workers; import_env cannot change it")
        elif not isinstance(value, (str, int, float)):
            chk.add(path + (key,), f"import_env value of {key} must be a string or a number, got {value!r}")
        else:
            out.append((key, str(value)))
    return None if len(out) != len(raw) else tuple(sorted(out))


def _kernel_entry(
    chk: Checker,
    name: str,
    ref: str,
    entry: dict[str, Any],
    path: tuple[Any, ...],
    backends: set[str],
    default_timeout: float,
    import_env: tuple[tuple[str, str], ...] = (),
) -> KernelEntry | None:
    try:  # the spec's facts, from a child that imported it (the harness's process never imports user code)
        spec = facts.get(ref, import_env)
    except loader.KernelLoadError as exc:
        chk.add(path + (("source",) if "source" in entry else ("op",) if "op" in entry else ()), str(exc))
        return None
    params = spec.arg_names
    stray = [t for t in spec.tunables if params is not None and not spec.per_target_fn and t not in params]
    if stray:  # it would be in every config id, and Triton would never see it: two ids for one binary
        chk.add(
            path + (("source",) if "source" in entry else ()),
            f"{spec.name}: tunable(s) {', '.join(map(repr, stray))} are not parameters of the kernel "
            f"{spec.fn_name} (its parameters: {', '.join(params or ())})",
        )
        return None
    dtypes = entry.get("dtypes")
    if not dtypes:
        chk.add(path, f"kernel {name!r} needs a non-empty 'dtypes' list")
        dtypes = []
    seen_dtypes: set[Any] = set()
    for i, dt in enumerate(dtypes if isinstance(dtypes, list) else []):
        if seen_before(seen_dtypes, dt):
            chk.add(path + ("dtypes", i), f"dtype {dt!r} is listed twice for {name!r}")
        elif dt not in spec.dtypes:
            chk.add(
                path + ("dtypes", i),
                f"dtype {dt!r} not supported by {spec.name} "
                f"(supported: {', '.join(spec.dtypes)}){suggest(dt, spec.dtypes)}",
            )
    raw_shapes: list[Any] = entry["shapes"] if isinstance(entry.get("shapes"), list) else []
    if not raw_shapes:
        chk.add(path, f"kernel {name!r} needs a non-empty 'shapes' list")
    shapes = [_check_shape(chk, spec, s, path + ("shapes", i)) for i, s in enumerate(raw_shapes)]
    seen_shapes: set[Any] = set()
    for i, shape in enumerate(shapes):
        if shape is not None and seen_before(seen_shapes, shape):
            chk.add(path + ("shapes", i), f"shape {dict(shape)} is listed twice for {name!r}")
    configs = configs_of(chk, spec, entry.get("configs", "default"), path + ("configs",), backends)
    interp_raw = entry.get("interpret", True)
    if spec.compile_only and isinstance(interp_raw, list) and interp_raw:
        chk.add(
            path + ("interpret",),
            f"{spec.name} is compile-only (no make_inputs, launch or reference): "
            "it has nothing to run in the interpreter",
        )
    if spec.compile_only:
        interp = []
    elif interp_raw is True:
        interp = list(spec.interpret_shapes)  # normalised where they were taken
    elif interp_raw is False:
        interp = []
    else:
        interp = [_check_shape(chk, spec, s, path + ("interpret", i)) for i, s in enumerate(interp_raw)]  # type: ignore[misc]  # None: a shape with a problem, refused below
    timeout = entry.get("timeout_s", default_timeout)
    if is_a(timeout, (int, float)) and not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_S):
        chk.add(
            path + ("timeout_s",), f"timeout_s must be a number of seconds in (0, {MAX_TIMEOUT_S}], got {timeout!r}"
        )
        timeout = default_timeout
    if any(s is None for s in shapes + interp) or configs is None:
        return None
    threshold: Any = entry.get("compare_threshold")
    if is_a(threshold, (int, float)) and not (math.isfinite(threshold) and 0 < threshold < 10):
        chk.add(path + ("compare_threshold",), f"compare_threshold is a relative change (0.05 = 5%), got {threshold!r}")
        return None
    return KernelEntry(
        name=name,
        ref=ref,
        dtypes=tuple(dtypes),
        configs=tuple(configs),
        shapes=tuple(tuple(s.items()) for s in shapes if s),
        interpret=tuple(tuple(s.items()) for s in interp if s),
        timeout_s=float(timeout),
        compare_threshold=float(threshold) if is_a(threshold, (int, float)) else None,
    )
