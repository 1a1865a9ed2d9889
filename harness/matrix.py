"""The run matrix: YAML in, validated plain dataclasses out.

Validation happens before anything compiles and reports every problem it finds,
each as ``file:line: message``. Triton drops unknown compile options without a
word, so option names are checked here against the backends of the matrix's
targets.
"""
from __future__ import annotations

import difflib
import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import loader, targets, tritoncompat, yamlpos
from harness.environments import CODEGEN_VARIABLES, DEFAULT, Environment, read_by_installed_triton
from harness.known import FIELDS as KNOWN_FIELDS
from harness.known import KnownFailure, specifier_problem
from harness.spec import KernelSpec

TOP_KEYS = {"name": str, "description": str, "triton": list, "targets": list, "kernels": dict, "known_failures": list,
            "timeout_s": (int, float), "seed": int, "kernels_dir": str, "environments": dict}
KERNEL_KEYS = {"source": str, "dtypes": list, "shapes": list, "configs": (list, str), "interpret": (list, bool),
               "timeout_s": (int, float), "compare_threshold": (int, float)}
CONFIG_SPACES = ("default", "nvidia", "amd")
MAX_TIMEOUT_S = 24 * 3600
#: accepted values of the compile options that have a range (what the backends accept and mean)
OPTION_RANGES: dict[str, tuple[Any, str]] = {
    "num_warps": ({1, 2, 4, 8, 16, 32, 64}, "a power of two from 1 to 64"),
    "num_stages": (range(1, 17), "an integer from 1 to 16"),
    "num_ctas": ({1, 2, 4, 8, 16}, "1, 2, 4, 8 or 16"),
    "maxnreg": (range(16, 256), "an integer from 16 to 255"),
    "waves_per_eu": (range(0, 11), "an integer from 0 (compiler's choice) to 10"),
    "matrix_instr_nonkdim": ({0, 4, 16, 32}, "0 (compiler's choice), 4, 16 or 32"),
    "kpack": ({1, 2}, "1 or 2"),
}
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?([.+-]\w+)*$")


@dataclass(frozen=True)
class ConfigEntry:
    """A config and where it came from: ``nvidia`` / ``amd`` default space (``nvidia+amd``: both) or the matrix."""

    values: tuple[tuple[str, Any], ...]
    origin: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.values)


@dataclass(frozen=True)
class KernelEntry:
    name: str
    ref: str
    dtypes: tuple[str, ...]
    shapes: tuple[tuple[tuple[str, Any], ...], ...]
    configs: tuple[ConfigEntry, ...]
    interpret: tuple[tuple[tuple[str, Any], ...], ...]
    timeout_s: float
    compare_threshold: float | None = None   # harness compare's threshold for this kernel's timings


@dataclass(frozen=True)
class Matrix:
    path: str
    name: str
    description: str
    triton: tuple[str, ...]
    targets: tuple[str, ...]
    kernels: tuple[KernelEntry, ...]
    timeout_s: float
    seed: int
    content_hash: str
    environments: tuple[tuple[str, tuple[Environment, ...]], ...] = ()  # per target, overriding the catalogue
    known_failures: tuple[KnownFailure, ...] = ()

    def environments_for(self, target: str) -> tuple[Environment, ...]:
        for name, envs in self.environments:
            if name == target:
                return envs
        return targets.catalogue()[target].environments


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class MatrixError(Exception):
    """Raised with every problem found; ``str()`` is one ``file:line: message`` per line."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def _type_name(t: Any) -> str:
    names = {str: "a string", list: "a list", dict: "a mapping", int: "an integer", float: "a number", bool: "a boolean"}
    if isinstance(t, tuple):
        if set(t) == {int, float}:
            return "a number"
        return " or ".join(names[x] for x in t if x is not float or int not in t)
    return names[t]


def _is(value: Any, t: Any) -> bool:
    types = t if isinstance(t, tuple) else (t,)
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def _suggest(word: str, options: Any) -> str:
    close = difflib.get_close_matches(str(word), sorted(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Checker:
    """Collects problems while walking the located YAML."""

    def __init__(self, file: str, doc: yamlpos.Located) -> None:
        self.file, self.doc, self.problems = file, doc, []

    def add(self, path: tuple[Any, ...], message: str) -> None:
        self.problems.append(Problem(self.file, self.doc.line(path), message))

    def keys(self, mapping: dict, path: tuple[Any, ...], allowed: dict, what: str) -> None:
        for key, value in mapping.items():
            if key not in allowed:
                self.add(path + (key,), f"unknown key {key!r} in {what}{_suggest(key, allowed)}")
            elif not _is(value, allowed[key]):
                self.add(path + (key,), f"{what} field {key!r} must be {_type_name(allowed[key])}, "
                                        f"got {type(value).__name__} {value!r}")


def _check_shape(chk: _Checker, spec: KernelSpec, shape: Any, path: tuple[Any, ...]) -> dict[str, Any] | None:
    if not isinstance(shape, dict):
        chk.add(path, f"shape must be a mapping of {', '.join(spec.dims)}, got {shape!r}")
        return None
    ok = True
    for key, value in shape.items():
        if key in spec.dims:
            if not _is(value, int) or value <= 0:
                chk.add(path + (key,), f"shape field {key!r} of {spec.name} must be a positive integer, got {value!r}")
                ok = False
        elif key in spec.flags:
            if not isinstance(value, bool):
                chk.add(path + (key,), f"shape flag {key!r} of {spec.name} must be true or false, got {value!r}")
                ok = False
        else:
            chk.add(path + (key,), f"unknown shape field {key!r} for {spec.name} (fields: "
                                   f"{', '.join(spec.dims + spec.flags)}){_suggest(key, spec.dims + spec.flags)}")
            ok = False
    for dim in spec.dims:
        if dim not in shape:
            chk.add(path, f"shape of {spec.name} lacks {dim!r}")
            ok = False
    return spec.normalize_shape(shape) if ok else None


def config_problems(spec: KernelSpec, config: dict[str, Any], backends: set[str]) -> list[tuple[str | None, str]]:
    """(key, message) for each problem in one config; key None for the config as a whole."""
    known_options: set[str] = set()
    for backend in backends:
        known_options |= tritoncompat.backend_option_names(backend)
    out: list[tuple[str | None, str]] = []
    for key, value in config.items():
        if key in spec.tunables:
            if not _is(value, int) or value <= 0:
                out.append((key, f"{key} must be a positive integer, got {value!r}"))
        elif key not in known_options:
            every = set(spec.tunables) | known_options
            out.append((key, f"unknown option {key!r} for {spec.name} on backend(s) {', '.join(sorted(backends))}"
                             f"{_suggest(key, every)}; Triton would drop it silently"))
        elif key in OPTION_RANGES:
            allowed, meaning = OPTION_RANGES[key]
            if not _is(value, int) or value not in allowed:
                out.append((key, f"{key} must be {meaning}, got {value!r}"))
        elif key == "enable_fp_fusion" and not isinstance(value, bool):
            out.append((key, f"enable_fp_fusion must be true or false, got {value!r}"))
        elif key not in ("enable_fp_fusion", "schedule_hint") and (not _is(value, int) or value < 0):
            out.append((key, f"{key} must be a non-negative integer, got {value!r}"))
    missing = [t for t in spec.tunables if t not in config]
    if missing:
        out.append((None, f"config lacks {', '.join(missing)} for {spec.name}"))
    return out


def _kernel_entry(chk: _Checker, name: str, entry: Any, backends: set[str], default_timeout: float,
                  kernels_dir: Path | None) -> KernelEntry | None:
    path = ("kernels", name)
    if not isinstance(entry, dict):
        chk.add(path, f"kernel {name!r} must map to a mapping of {', '.join(KERNEL_KEYS)}")
        return None
    chk.keys(entry, path, KERNEL_KEYS, f"kernel {name!r}")
    source = entry.get("source") if isinstance(entry.get("source"), str) else None
    try:
        ref = loader.resolve(name, source, kernels_dir)
        loader.probe(ref)
        spec = loader.load(ref)
    except loader.KernelLoadError as exc:
        chk.add(path + (("source",) if source else ()), str(exc))
        return None
    dtypes = entry.get("dtypes")
    if not dtypes:
        chk.add(path, f"kernel {name!r} needs a non-empty 'dtypes' list")
        dtypes = []
    for i, dt in enumerate(dtypes if isinstance(dtypes, list) else []):
        if dt not in spec.dtypes:
            chk.add(path + ("dtypes", i), f"dtype {dt!r} not supported by {spec.name} "
                                          f"(supported: {', '.join(spec.dtypes)}){_suggest(dt, spec.dtypes)}")
    raw_shapes = entry.get("shapes") if isinstance(entry.get("shapes"), list) else []
    if not raw_shapes:
        chk.add(path, f"kernel {name!r} needs a non-empty 'shapes' list")
    shapes = [_check_shape(chk, spec, s, path + ("shapes", i)) for i, s in enumerate(raw_shapes)]
    configs = _configs(chk, spec, entry.get("configs", "default"), path + ("configs",), backends)
    interp_raw = entry.get("interpret", True)
    if interp_raw is True:
        interp = [spec.normalize_shape(s) for s in spec.interpret_shapes]
    elif interp_raw is False:
        interp = []
    else:
        interp = [_check_shape(chk, spec, s, path + ("interpret", i)) for i, s in enumerate(interp_raw)]
    timeout = entry.get("timeout_s", default_timeout)
    if _is(timeout, (int, float)) and not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_S):
        chk.add(path + ("timeout_s",), f"timeout_s must be a number of seconds in (0, {MAX_TIMEOUT_S}], "
                                       f"got {timeout!r}")
        timeout = default_timeout
    if any(s is None for s in shapes + interp) or configs is None:
        return None
    for i, shape in enumerate(shapes):
        for config in configs:
            try:
                spec.config_ok(dict(shape), config.as_dict())
            except Exception as exc:  # noqa: BLE001 - the spec's own code: its failure is this entry's error
                chk.add(path + ("shapes", i), f"{spec.name}.config_ok raised {type(exc).__name__}: {exc} for shape "
                                              f"{dict(shape)} and config {config.as_dict()}")
                return None
    threshold = entry.get("compare_threshold")
    if _is(threshold, (int, float)) and not (math.isfinite(threshold) and 0 < threshold < 10):
        chk.add(path + ("compare_threshold",), f"compare_threshold is a relative change (0.05 = 5%), got {threshold!r}")
        return None
    return KernelEntry(name=name, ref=ref, dtypes=tuple(dtypes), configs=tuple(configs),
                       shapes=tuple(tuple(s.items()) for s in shapes if s),
                       interpret=tuple(tuple(s.items()) for s in interp if s), timeout_s=float(timeout),
                       compare_threshold=float(threshold) if _is(threshold, (int, float)) else None)


def _configs(chk: _Checker, spec: KernelSpec, raw: Any, path: tuple[Any, ...],
             backends: set[str]) -> list[ConfigEntry] | None:
    if isinstance(raw, str):
        if raw not in CONFIG_SPACES:
            chk.add(path, f"configs must be a list or one of {', '.join(CONFIG_SPACES)}, "
                          f"got {raw!r}{_suggest(raw, CONFIG_SPACES)}")
            return None
        spaces = [("nvidia", spec.nvidia_configs), ("amd", spec.amd_configs)]
        chosen = [(o, c) for o, cs in spaces if raw in ("default", o) for c in cs]
        bad = False
        for origin, config in chosen:
            for _key, msg in config_problems(spec, dict(config), {"cuda", "hip"}):
                chk.add(path, f"default {origin} config {dict(config)} of {spec.name}: {msg}")
                bad = True
        if bad:
            return None
        # a config listed in both vendors' spaces is compiled once, with both origins ("nvidia+amd")
        merged: dict[tuple[tuple[str, Any], ...], list[str]] = {}
        for origin, config in chosen:
            origins = merged.setdefault(tuple(sorted(dict(config).items())), [])
            if origin not in origins:
                origins.append(origin)
        return [ConfigEntry(values, "+".join(origins)) for values, origins in merged.items()]
    out: list[ConfigEntry] = []
    bad = False
    for i, config in enumerate(raw):
        if not isinstance(config, dict):
            chk.add(path + (i,), f"config must be a mapping, got {config!r}")
            bad = True
            continue
        for key, msg in config_problems(spec, config, backends):
            chk.add(path + (i,) + ((key,) if key else ()), msg)
            bad = True
        out.append(ConfigEntry(tuple(config.items()), "matrix"))
    return None if bad else out


def _environments(chk: _Checker, raw: Any, target_names: list[str]) -> tuple[tuple[str, tuple[Environment, ...]], ...]:
    """``environments: {target: [{name: ..., env: {VAR: value}}]}``, checked against the backend's knobs."""
    out = []
    cat = targets.catalogue()
    for target, entries in raw.items():
        path = ("environments", target)
        if target not in target_names:
            chk.add(path, f"environments for {target!r}, which is not a target of this matrix"
                          f"{_suggest(target, target_names)}")
            continue
        if not isinstance(entries, list) or not entries:
            chk.add(path, f"environments of {target!r} must be a non-empty list of {{name, env}}")
            continue
        backend = cat[target].backend if target in cat else "hip"
        envs, names = [], set()
        for i, entry in enumerate(entries):
            where = path + (i,)
            if not isinstance(entry, dict) or set(entry) - {"name", "env"} or not isinstance(entry.get("name"), str):
                chk.add(where, "an environment is a mapping {name: str, env: {VARIABLE: value}}")
                continue
            if entry["name"] in names:
                chk.add(where + ("name",), f"duplicate environment name {entry['name']!r} for {target!r}")
            names.add(entry["name"])
            env = entry.get("env") or {}
            if not isinstance(env, dict):
                chk.add(where + ("env",), "env must be a mapping of VARIABLE: value")
                continue
            for var, value in env.items():
                known = CODEGEN_VARIABLES[backend]
                read = read_by_installed_triton(str(var))
                others = {v for b, names in CODEGEN_VARIABLES.items() if b != backend for v in names} - known
                if var in others:
                    chk.add(where + ("env", var), f"{var!r} is read by another backend, not by {target!r}'s "
                                                  f"{backend} backend: it would compile Triton's default silently")
                elif var in ("TRITON_CACHE_DIR", "TRITON_INTERPRET", "TRITON_DUMP_DIR", "TRITON_KERNEL_DUMP",
                             "TRITON_ALWAYS_COMPILE", "TRITON_OVERRIDE_DIR", "TRITON_KERNEL_OVERRIDE"):
                    chk.add(where + ("env", var), f"{var!r} is set by the harness itself or writes outside the run "
                                                  "directory: it cannot be a compile environment variable")
                elif var not in known and not read:
                    chk.add(where + ("env", var), f"{var!r} is not a codegen variable of the {backend} backend"
                                                  f"{_suggest(var, known)}")
                elif read is False:
                    chk.add(where + ("env", var), f"{var!r} is not read by the installed triton: it would "
                                                  "compile Triton's default silently")
                if not isinstance(value, (str, int, bool)):
                    chk.add(where + ("env", var), f"value of {var} must be a string, number or boolean")
            pairs = tuple(sorted((str(k), str(int(v)) if isinstance(v, bool) else str(v)) for k, v in env.items()))
            if entry["name"] == DEFAULT and pairs:
                chk.add(where + ("env",), "the environment named 'default' is Triton's defaults: it sets no variables")
            envs.append(Environment(entry["name"], pairs))
        out.append((target, tuple(envs)))
    return tuple(out)


def _known_failures(chk: _Checker, raw: Any) -> tuple[KnownFailure, ...]:
    """``known_failures: [{reason, kernel?, shape?, config?, target?, environment?, triton?}]`` (globs, a specifier)."""
    if not isinstance(raw, list):
        return ()
    out = []
    allowed = {"reason", "triton", *KNOWN_FIELDS}
    for i, entry in enumerate(raw):
        path = ("known_failures", i)
        if not isinstance(entry, dict):
            chk.add(path, "a known failure is a mapping {reason, kernel, shape, config, target, environment, triton}")
            continue
        bad = False
        for key, value in entry.items():
            if key not in allowed:
                chk.add(path + (key,), f"unknown key {key!r} in a known failure{_suggest(key, allowed)}")
                bad = True
            elif not isinstance(value, str) or not value.strip():
                chk.add(path + (key,), f"known failure field {key!r} must be a non-empty string, got {value!r}")
                bad = True
        if not isinstance(entry.get("reason"), str):
            chk.add(path, "a known failure needs a 'reason' (what fails, and where it is tracked)")
            bad = True
        problem = specifier_problem(entry["triton"]) if isinstance(entry.get("triton"), str) else ""
        if problem:
            chk.add(path + ("triton",), problem)
            bad = True
        if not bad:
            out.append(KnownFailure(**{k: str(v) for k, v in entry.items()}))
    return tuple(out)


def parse(path: str | Path, text: str | None = None) -> Matrix:
    """Read and validate a matrix file; raises :class:`MatrixError` listing every problem."""
    file = str(path)
    try:
        if text is None:
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise MatrixError([Problem(file, 0, f"cannot read matrix: {exc.strerror or exc}")]) from None
            text = yamlpos.decode(data)
        doc = yamlpos.load(text)
    except yamlpos.YamlError as exc:
        raise MatrixError([Problem(file, exc.line, exc.message)]) from None
    try:
        return _validate(file, text, doc)
    except MatrixError:
        raise
    except Exception as exc:  # noqa: BLE001 - a safety net: bad input is an error line, never a traceback
        raise MatrixError([Problem(file, 1, f"cannot validate this matrix: {type(exc).__name__}: "
                                            f"{' '.join(str(exc).split())[:300]}")]) from None


def _validate(file: str, text: str, doc: yamlpos.Located) -> Matrix:
    chk = _Checker(file, doc)
    data = doc.value
    if not isinstance(data, dict):
        chk.add((), "a matrix must be a mapping with name, targets and kernels")
        raise MatrixError(chk.problems)
    # top-level keys starting with "x-" hold YAML anchors for merge keys (<<: *name) and are otherwise ignored
    chk.keys({k: v for k, v in data.items() if not str(k).startswith("x-")}, (), TOP_KEYS, "matrix")
    for required in ("name", "targets", "kernels"):
        if required not in data:
            chk.add((), f"matrix lacks required field {required!r}")
    cat = targets.catalogue()
    target_names = data.get("targets") if isinstance(data.get("targets"), list) else []
    if isinstance(data.get("targets"), list) and not target_names:
        chk.add(("targets",), f"targets must name at least one target (known: {', '.join(targets.catalogue())})")
    for i, t in enumerate(target_names):
        if not isinstance(t, str):
            chk.add(("targets", i), f"a target is a catalogue name (a string), got {type(t).__name__} {t!r}")
            continue
        if t not in cat:
            chk.add(("targets", i), f"unknown target {t!r} (known: {', '.join(cat)}){_suggest(t, cat)}")
    target_names = [t for t in target_names if isinstance(t, str)]
    backends = {cat[t].backend for t in target_names if t in cat} or {"cuda", "hip"}
    versions = data.get("triton", ["installed"]) if isinstance(data.get("triton", []), list) else []
    for i, v in enumerate(versions):
        if not isinstance(v, str) or not (v == "installed" or _VERSION_RE.match(v)):
            chk.add(("triton", i), f"triton version must be a string like \"3.6.0\" or \"installed\", got {v!r}")
    timeout = data.get("timeout_s", 300)
    if _is(timeout, (int, float)) and not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_S):
        chk.add(("timeout_s",), f"timeout_s must be a number of seconds in (0, {MAX_TIMEOUT_S}], got {timeout!r}")
        timeout = 300
    known = _known_failures(chk, data.get("known_failures"))
    environments = _environments(chk, data["environments"], target_names) \
        if isinstance(data.get("environments"), dict) else ()
    kdir = data.get("kernels_dir")
    if isinstance(kdir, str):
        kernels_dir: Path | None = (Path(file).parent / kdir).resolve()
    else:
        # a matrix in <repo>/matrices/ uses <repo>/kernels/, whether or not the harness is installed from there
        sibling = Path(file).resolve().parent.parent / "kernels"
        kernels_dir = sibling if sibling.is_dir() else None
    entries = []
    if isinstance(data.get("kernels"), dict):
        if not data["kernels"]:
            chk.add(("kernels",), "matrix has no kernels")
        for name, entry in data["kernels"].items():
            parsed = _kernel_entry(chk, str(name), entry, backends, float(timeout) if _is(timeout, (int, float))
                                   else 300.0, kernels_dir)
            if parsed:
                entries.append(parsed)
    if chk.problems:
        raise MatrixError(chk.problems)
    return Matrix(path=file, name=str(data["name"]), description=str(data.get("description", "")),
                  triton=tuple(versions) or ("installed",), targets=tuple(target_names), kernels=tuple(entries),
                  timeout_s=float(timeout), seed=int(data.get("seed", 0)),
                  content_hash=hashlib.sha256(text.encode()).hexdigest(), environments=environments,
                  known_failures=known)
