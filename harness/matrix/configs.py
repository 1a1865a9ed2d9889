"""A kernel entry's configs, checked: a named space (``default``, ``nvidia``, ``amd``: the spec's own lists) or the
matrix's list, every key a tunable of the spec or a compile option some target's backend takes, every option's
value of its type and in its range; the same config from two spaces is one config of both."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from harness.intake.facts import SpecFacts
from harness.model.runtime import Check
from harness.support import tritoncompat
from harness.support.checking import Checker, is_a, seen_before, suggest

CONFIG_SPACES = ("default", "nvidia", "amd")


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


@dataclass(frozen=True)
class ConfigEntry:
    """A config and where it came from: ``nvidia`` / ``amd`` default space (``nvidia+amd``: both) or the matrix.
    A config of a kernel Inductor generated also carries its host check, made at capture
    (:mod:`harness.intake.inductor.compiled_check`): what the case's record says of its correctness, never part of
    what is built (a changed check changes no build, no cache key)."""

    values: tuple[tuple[str, Any], ...]
    origin: str
    check: Check | None = field(default=None, compare=False, hash=False)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.values)


def _option_type_problem(key: str, value: Any, types: set[type]) -> str:
    """What is wrong with an option's value for the types the installed Triton declares ('' when nothing)."""
    if not types:  # Triton not importable: the static list's options are integers or flags
        return (
            ""
            if isinstance(value, bool) or (is_a(value, int) and value >= 0)
            else f"{key} must be a non-negative integer or true/false, got {value!r}"
        )
    if bool in types and isinstance(value, bool):
        return ""
    if int in types and is_a(value, int):
        return "" if value >= 0 else f"{key} must be a non-negative integer, got {value!r}"
    if float in types and is_a(value, (int, float)) and math.isfinite(value):
        return ""
    if str in types and isinstance(value, str):
        return ""
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    return f"{key} must be {' or '.join(names[t] for t in sorted(types, key=str))}, got {value!r}"


def config_problems(spec: SpecFacts, config: dict[str, Any], backends: set[str]) -> list[tuple[str | None, str]]:
    """(key, message) for each problem in one config; key None for the config as a whole."""
    known_options: set[str] = set()
    for backend in backends:
        known_options |= tritoncompat.backend_option_names(backend)
    out: list[tuple[str | None, str]] = []
    for key, value in config.items():
        if key in spec.tunables:
            if not is_a(value, int) or value < 0:  # 0 is a switch's "off" (softmax's CHUNK 0: whole rows)
                out.append((key, f"{key} must be an integer >= 0, got {value!r}"))
        elif key not in known_options:
            every = set(spec.tunables) | known_options
            out.append(
                (
                    key,
                    f"unknown option {key!r} for {spec.name} on backend(s) {', '.join(sorted(backends))}"
                    f"{suggest(key, every)}; Triton would drop it silently",
                )
            )
        elif key in OPTION_RANGES:
            allowed, meaning = OPTION_RANGES[key]
            if not is_a(value, int) or value not in allowed:
                out.append((key, f"{key} must be {meaning}, got {value!r}"))
        else:
            types = set().union(*(tritoncompat.backend_option_types(b).get(key, ()) for b in backends))
            problem = _option_type_problem(key, value, types)
            if problem:
                out.append((key, problem))
    missing = [t for t in spec.tunables if t not in config]
    if missing:
        out.append((None, f"config lacks {', '.join(missing)} for {spec.name}"))
    return out


def configs_of(
    chk: Checker, spec: SpecFacts, raw: Any, path: tuple[Any, ...], backends: set[str]
) -> list[ConfigEntry] | None:
    if isinstance(raw, str):
        if raw not in CONFIG_SPACES:
            chk.add(
                path,
                f"configs must be a list or one of {', '.join(CONFIG_SPACES)}, "
                f"got {raw!r}{suggest(raw, CONFIG_SPACES)}",
            )
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
    if not raw:
        chk.add(
            path,
            f"configs is an empty list: nothing of {spec.name} would be built (leave it out for the default spaces)",
        )
        return None
    seen: set[Any] = set()
    for i, config in enumerate(raw):
        if not isinstance(config, dict):
            chk.add(path + (i,), f"config must be a mapping, got {config!r}")
            bad = True
            continue
        if seen_before(seen, config):
            chk.add(path + (i,), f"config {config} is listed twice")
            bad = True
            continue
        for key, msg in config_problems(spec, config, backends):
            chk.add(path + (i,) + ((key,) if key else ()), msg)
            bad = True
        out.append(ConfigEntry(tuple(config.items()), "matrix"))
    return None if bad else out
