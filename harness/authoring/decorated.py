"""Kernels as libraries ship them: a ``JITFunction`` under ``@triton.autotune`` and ``@triton.heuristics``.

A spec's ``fn`` may be the decorated object itself. :func:`unwrap` walks the chain down to the
``JITFunction`` (what is compiled) and keeps what the layers say: the autotune list (which becomes
the config space of every target when the spec gives none), its ``key``, its pruning, and each
heuristic (evaluated per build into a constexpr, as ``Heuristics.run`` would at a launch).
:func:`forced` makes a launch through the decorated object — the spec's own ``launch``, or the
library's op around it — use one config the harness chose: every autotuner in the chain holds that
config alone while the launch runs, so Triton's autotuner neither benchmarks nor prunes, and runs
that config's ``pre_hook`` itself, as it would for its own pick.

Layers are recognised by what they hold, not by class (libraries subclass ``Autotuner``): an
autotuner has ``configs`` and ``keys``, a heuristics layer ``values`` and ``arg_names``.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

#: compile options a ``triton.Config`` carries besides its meta-parameters (None: not set)
OPTION_FIELDS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Decorations:
    """What the decorator layers of a kernel say, outermost first."""

    layers: tuple[str, ...]  # class names, outermost first, ending in JITFunction
    autotune_configs: tuple[dict[str, Any], ...]  # the (outermost) autotune list as harness config dicts
    autotune_key: tuple[str, ...]
    prune: str  # how the autotuner prunes ('' for not at all)
    heuristics: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...]
    pre_hooks: bool  # some config (or the autotuner) has a pre_hook

    @property
    def meta_names(self) -> tuple[str, ...]:
        """The meta-parameters the autotune list sets (the kernel's tunables)."""
        seen: list[str] = []
        for c in self.autotune_configs:
            seen += [k for k in c if k not in OPTION_FIELDS and k not in seen]
        return tuple(seen)


def _is_autotuner(obj: Any) -> bool:
    return hasattr(obj, "configs") and hasattr(obj, "keys") and hasattr(obj, "fn")


def _is_heuristics(obj: Any) -> bool:
    return isinstance(getattr(obj, "values", None), dict) and hasattr(obj, "arg_names") and hasattr(obj, "fn")


def config_dict(config: Any) -> dict[str, Any]:
    """A ``triton.Config`` as a harness config: its meta-parameters and the options it sets."""
    out = dict(config.kwargs)
    for name in OPTION_FIELDS:
        value = getattr(config, name, None)
        if value is not None and not (name == "num_ctas" and value == 1):
            out[name] = value
    return out


def unwrap(fn: Any) -> tuple[Any, Decorations | None]:
    """(the JITFunction, its decorations or None for a plain ``@triton.jit`` kernel). Under ``TRITON_INTERPRET=1``
    ``triton.jit`` makes an ``InterpretedFunction``: the chain ends there instead."""
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction

        leaves: tuple[type, ...] = (JITFunction, InterpretedFunction)
    except ImportError:
        leaves = (JITFunction,)
    layers, autotuners, heuristics = [], [], []
    obj = fn
    while not isinstance(obj, leaves):
        if _is_autotuner(obj):
            autotuners.append(obj)
        elif _is_heuristics(obj):
            heuristics.append(obj)
        elif not hasattr(obj, "fn"):
            raise TypeError(
                f"{type(fn).__name__} is neither a triton.jit kernel nor a chain of triton.autotune / "
                f"triton.heuristics over one ({type(obj).__name__} has no .fn)"
            )
        layers.append(type(obj).__name__)
        obj = obj.fn
    if not layers:
        return fn, None
    first = autotuners[0] if autotuners else None
    prune = ""
    if first is not None:
        parts = [
            name
            for name, on in (
                ("early_config_prune", getattr(first, "early_config_prune", None)),
                ("perf_model", getattr(first, "perf_model", None)),
            )
            if on
        ]
        prune = ", ".join(parts)
    # inner layers run after outer ones: a heuristic sees what the outer layers set (as at a launch)
    heur = tuple((name, h) for layer in reversed(heuristics) for name, h in layer.values.items())
    return obj, Decorations(
        layers=tuple(layers) + ("JITFunction",),
        autotune_configs=tuple(config_dict(c) for c in (first.configs if first else ())),
        autotune_key=tuple(first.keys) if first else (),
        prune=prune,
        heuristics=heur,
        pre_hooks=any(getattr(c, "pre_hook", None) for a in autotuners for c in a.configs)
        or any(getattr(a, "user_defined_pre_hook", False) for a in autotuners),
    )


def heuristic_values(decorations: Decorations | None, args: Mapping[str, Any]) -> dict[str, Any]:
    """Each heuristic's value for these arguments (scalars and constexprs by name, pointers as stand-ins); an
    error names the heuristic and what it asked for."""
    out: dict[str, Any] = {}
    if decorations is None:
        return out
    for name, h in decorations.heuristics:
        try:
            out[name] = h({**args, **out})
        except Exception as exc:  # noqa: BLE001 - said in one line, naming the heuristic
            raise ValueError(
                f"heuristic {name!r} cannot be evaluated without a GPU ({type(exc).__name__}: {exc}); "
                f"give {name} in the spec's fixed_constexprs"
            ) from None
    return out


def prune(fn: Any, configs: list[dict[str, Any]], nargs: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The autotuner's own ``early_config_prune`` applied to ``configs`` (harness dicts) where it runs on these
    stand-in arguments; (configs, note) — the note says it was applied, or why not."""
    import triton

    tuner = fn
    while tuner is not None and not _is_autotuner(tuner):
        tuner = getattr(tuner, "fn", None)
    rule = getattr(tuner, "early_config_prune", None) if tuner is not None else None
    if rule is None:
        return configs, ""
    as_configs = [
        triton.Config(
            {k: v for k, v in c.items() if k not in OPTION_FIELDS}, **{k: c[k] for k in OPTION_FIELDS if k in c}
        )
        for c in configs
    ]
    try:
        kept = rule(as_configs, dict(nargs))
    except Exception as exc:  # noqa: BLE001 - a rule that needs real tensors cannot run here
        return configs, f"early_config_prune not applied without a GPU ({type(exc).__name__}: {str(exc)[:120]})"
    keys = {repr(sorted(config_dict(c).items())) for c in kept}
    return [
        c for c in configs if repr(sorted(c.items())) in keys
    ], f"early_config_prune kept {len(kept)} of {len(configs)}"


@contextmanager
def forced(fn: Any, config: Mapping[str, Any], tunables: tuple[str, ...] = ()) -> Iterator[None]:
    """While the block runs, every autotuner in ``fn``'s chain holds ``config`` alone (its ``pre_hook`` kept from
    the autotune list's matching entry), so a launch through it uses that config and runs its pre_hook."""
    import triton

    tuners = []
    obj = fn
    while obj is not None and hasattr(obj, "fn"):
        if _is_autotuner(obj):
            tuners.append(obj)
        obj = obj.fn
    if not tuners:
        yield
        return
    wanted = dict(config)
    with _LOCK:
        saved = [(t, t.configs, t.cache) for t in tuners]
        try:
            for t in tuners:
                hook = next((c.pre_hook for c in t.configs if config_dict(c) == wanted), None)
                meta = {k: v for k, v in wanted.items() if k not in OPTION_FIELDS}
                t.configs = [triton.Config(meta, **{k: wanted[k] for k in OPTION_FIELDS if k in wanted}, pre_hook=hook)]
                t.cache = {}
            yield
        finally:
            for t, configs, cache in saved:
                t.configs, t.cache = configs, cache
