"""Every config of every kernel Inductor generated for a compiled entry, checked on the CPU at the entry's shape.

Runs in the capture child (:mod:`harness.intake.inductor.compiled`), right after the capture, on the graph it compiled: the
child runs with ``TRITON_INTERPRET=1`` from its start, so each kernel module Inductor wrote holds an interpreted
function, and Inductor's own launcher (``CachingAutotuner.run``) takes its interpreter branch: Inductor's grid for
the config, the config's constexprs, the kernel run by Triton's CPU interpreter. What is real: the entry's inputs
made on the CPU with its seed, the module's weights (a factory's module built again on the CPU, seeded as the
capture's), the compiled wrapper Inductor generated for the target (its allocations made on the host, its extern
calls run by the CPU's aten, the GPU-only attention kernels by ATen's CPU attention), and the eager reference.

The graph runs once with every kernel at a wide config (:func:`harness.intake.inductor.sampled_check.wide`), every program,
and its outputs are compared with eager's at the dtype's tolerance; each of Inductor's configs is then compared with
its kernel's wide config on windows of the kernel's grid (:mod:`harness.intake.inductor.sampled_check`). Where the wide
configs' graph does not match eager, the first configs' graph is tried: if it matches, it is the reference. Warps
and stages do not change what the interpreter computes, so configs that differ only there share one check (each
still says it was checked). Where the graph cannot run on the host (an op the interpreter lacks, an extern kernel
without a CPU kernel) or the work is over its budget (:data:`BUDGET_ENV`), every config it could not reach says
``not checked`` with the reason: never passed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Any, Callable, Iterator, Mapping

from harness.intake.inductor import graph_reference, host_graph, sampled_check
from harness.intake.inductor.inductor_launches import candidates
from harness.model.runtime import Check
from harness.support import torchcompat

#: the variable that sets the seconds of host work one graph's check may take (50 unless set,
#: :mod:`harness.support.settings`); a capture's call limit may leave it less (its share :data:`SHARE` of
#: ``HARNESS_CALLBACK_TIMEOUT_S`` from the call's start: the check never costs the capture)
BUDGET_ENV = "HARNESS_CHECK_BUDGET_S"
SHARE = 0.7

#: a kernel's autotuner (Inductor's ``CachingAutotuner``), and the configs (``triton.Config``) kernels are held to
Autotuner = Any
Held = Mapping[str, object]

NOT_CHECKED = "skipped"


def over_budget() -> str:
    """Why a config the check did not reach is not checked: the budget with its numbers and what to do."""
    from harness.support.settings import timeout_s

    return (f"over the host check's time for this graph ({BUDGET_ENV}={timeout_s(BUDGET_ENV):g} s, and at most "
            f"{SHARE:.0%} of HARNESS_CALLBACK_TIMEOUT_S={timeout_s('HARNESS_CALLBACK_TIMEOUT_S'):g} s from the "
            "capture's start): raise them, or list a smaller shape")  # fmt: skip


@contextlib.contextmanager
def keeping_graphs() -> Iterator[list[tuple[Any, Any]]]:
    """Each graph Dynamo hands Inductor in the block, with what Inductor made of it: ``(graph module, compiled
    callable)`` (the outermost ``compile_fx`` call: it calls itself for its config patches)."""
    kept: list[tuple[Any, Any]] = []
    depth = [0]

    def keeping(original: Callable[..., Any]) -> Callable[..., Any]:
        def compile_fx(gm: Any, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            try:
                inner = original(gm, example_inputs, *args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                kept.append((gm, inner))
            return inner

        return compile_fx

    with torchcompat.compile_fx_replaced(keeping):
        yield kept


def interpreting() -> bool:
    """Whether this process's Triton builds interpreted kernels (the capture child sets it before Triton loads)."""
    import os

    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def check_graph(
    kept: list[tuple[Any, Any]],
    fn: Any,
    make_inputs: Any,
    shape: Mapping[str, int],
    dtype: str,
    factory: bool,
    autotuners: Mapping[str, Autotuner],
    tolerance: tuple[float, float],
    started: float,
    given: host_graph.Call | None = None,
) -> dict[str, list[Check]]:
    """A check per config of each kernel (by kernel name, in its configs' order). ``started``: when the capture's
    call began (``time.monotonic()``), which with its limit sets the check's deadline. ``given``: the host call to
    check against (an op's region: what the op called it with on the host), instead of the entry's ``fn`` and
    inputs. The check's own failure is every config's ``not checked`` with the reason: it never costs the capture
    its tables."""
    deadline = deadline_of(started)
    configs = {name: candidates(auto) for name, auto in autotuners.items()}

    def everyone(reason: str) -> dict[str, list[Check]]:
        return {n: [Check(status=NOT_CHECKED, reason=reason) for _ in cs] for n, cs in configs.items()}

    from harness.support.settings import timeout_s

    if timeout_s(BUDGET_ENV) == 0:
        return everyone(f"the host check's budget is 0 s ({BUDGET_ENV}=0)")
    try:
        return _checked(autotuners, configs, kept, fn, make_inputs, shape, dtype, factory, tolerance, deadline,
                        everyone, given)  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - whatever the host run of a compiled graph raises
        return everyone(f"the check failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")


def _checked(autotuners: Mapping[str, Autotuner], configs: Mapping[str, list[Any]], kept: list[tuple[Any, Any]],
             fn: Any, make_inputs: Any, shape: Mapping[str, int], dtype: str, factory: bool,
             tolerance: tuple[float, float], deadline: float,
             everyone: Callable[[str], dict[str, list[Check]]], given: host_graph.Call | None) -> dict[str, list[Check]]:  # fmt: skip
    if not interpreting() and given is None:  # an op's region: its kernels made interpreted on their own
        return everyone("the capture ran without Triton's interpreter")
    if len(kept) != 1:
        return everyone(f"Dynamo made {len(kept)} graphs of the function; the check runs one")
    expected = _expected_s(autotuners, {n: sampled_check.wide(autotuners[n]) for n in configs})
    if time.monotonic() + expected > deadline:  # before inputs, weights and eager are made at the entry's shape
        left = max(deadline - time.monotonic(), 0.0)
        return everyone(f"about {expected:,.0f} s of interpreter work, {left:.0f} s left: {over_budget()}")
    try:
        run, eager = host_graph.prepared(kept[0], fn, make_inputs, shape, dtype, factory, given)
    except host_graph.HostError as exc:
        return everyone(str(exc))

    graph, reference, launches, own = _reference_run(autotuners, configs, run, eager, tolerance, deadline)
    out: dict[str, list[Check]] = {}
    for name, cs in configs.items():
        done: dict[str, Check] = {_key(reference[name]): own[name]}
        for cfg in cs:
            if _key(cfg) not in done:
                done[_key(cfg)] = _against(graph, launches.get(name), reference[name], cfg, tolerance, deadline)
        out[name] = [done[_key(c)] for c in cs]
    return out


def _expected_s(autotuners: Mapping[str, Autotuner], wide: Mapping[str, sampled_check.Config]) -> float:
    """The graph's whole run at the wide configs, estimated from the capture's recorded launches (0 where a
    kernel's launch was not recorded: an op's region)."""
    from harness.intake.inductor import inductor_launches

    total = 0.0
    for name, config in wide.items():
        kernel = inductor_launches.recorded(name)
        if kernel is None or not kernel.launches:
            continue
        auto, launch = autotuners[name], kernel.launches[0]
        if "extra_launcher_args" in auto.inductor_meta:  # a template's own grid, recorded at its launch
            grid = tuple(int(g) for g in launch["grids"][0])
        else:
            grid = inductor_launches.grid_of(auto, config, tuple(launch["args"].values()))
        total += len(kernel.launches) * sampled_check.estimate_s(auto, config, grid)
    return total


def _narrowest(graph: Check) -> Check:
    """The check of a kernel's narrowest config where the graph ran it wide: the graph's, on the ground that the
    narrowest agreed with the wide config on the same programs."""
    if graph.status != "ok":
        return graph
    return dataclasses.replace(graph, reason="at the entry's shape: the graph against eager with this kernel at a "
                               "wide config, which this one agrees with on the same programs")  # fmt: skip


def _key(cfg: Any) -> str:
    return repr(sorted(cfg.kwargs.items()))


def _reference_run(autotuners: Mapping[str, Autotuner], configs: Mapping[str, list[Any]], run: Callable[[Held], Any],
                   eager: graph_reference.Reference, tolerance: tuple[float, float], deadline: float,
                   ) -> tuple[Check, dict[str, sampled_check.Config], dict[str, sampled_check.Launch], dict[str, Check]]:  # fmt: skip
    """The graph run whole against eager, and the config each kernel's configs are compared with: (the graph's
    check, that config per kernel, each kernel's launch as it was before it ran, that config's own check).

    The graph runs with each kernel's wide config (:func:`harness.intake.inductor.sampled_check.wide`: fast on the host).
    Each kernel's narrowest config (:func:`harness.intake.inductor.sampled_check.narrow`) is then held to its wide one on
    the same programs: where they agree, the narrowest stands for the kernel (its windows are the configs' own
    blocks: cheap); where they do not, the kernel's result depends on its block, and the graph runs again with
    those kernels at their narrowest, which is then what decides against eager."""
    wide: dict[str, sampled_check.Config] = {n: sampled_check.wide(autotuners[n]) for n in configs}
    launches: dict[str, sampled_check.Launch] = {}
    with sampled_check.recording(set(configs), launches):
        graph = _one(run, eager, wide, tolerance, deadline)
    if graph.status == NOT_CHECKED:
        return graph, wide, launches, {n: graph for n in configs}
    reference = {n: sampled_check.narrow(autotuners[n], wide[n]) for n in configs}
    depends: set[str] = set()
    for name in configs:
        if name not in launches or _key(reference[name]) == _key(wide[name]):
            continue
        launch, held, narrowed = launches[name], wide[name], reference[name]
        found, failed = _guarded(lambda: host_graph.on_host(lambda: sampled_check.check(launch, held, narrowed, tolerance)),
                                 deadline)  # fmt: skip
        if failed is not None:
            return failed, wide, launches, {n: failed for n in configs}
        if found.status == "mismatch":
            depends.add(name)
    if depends:  # the graph again, each kernel whose result depends on its block at its narrowest
        again: dict[str, sampled_check.Launch] = {}
        with sampled_check.recording(depends, again):
            graph = _one(run, eager, {n: reference[n] if n in depends else wide[n] for n in configs}, tolerance,
                         deadline)  # fmt: skip
        launches.update(again)
    if graph.status == "ok":
        graph = dataclasses.replace(graph, reason="at the entry's shape: every program, the graph against eager")
    ran_whole = {n for n in configs if n in depends or _key(reference[n]) == _key(wide[n])}
    return graph, reference, launches, {n: graph if n in ran_whole else _narrowest(graph) for n in configs}


def _against(graph: Check, launch: sampled_check.Launch | None, reference: Any, config: Any,
             tolerance: tuple[float, float], deadline: float) -> Check:  # fmt: skip
    """One of Inductor's configs, by what the reference configs' graph run found and what the config wrote against
    the kernel's reference config on the same programs (:mod:`harness.intake.inductor.sampled_check`)."""
    if graph.status == NOT_CHECKED:
        return graph
    if launch is None:
        return Check(status=NOT_CHECKED, reason="the kernel was not launched in the graph's run on the host")
    found, failed = _guarded(lambda: host_graph.on_host(lambda: sampled_check.check(launch, reference, config, tolerance)),
                             deadline)  # fmt: skip
    if failed is not None:
        return failed
    if graph.status == "ok" or found.status in (NOT_CHECKED, "error"):
        return found
    if found.status == "ok":  # it computes what the reference config does, and the graph with that is wrong
        return Check(
            status="mismatch", error=f"as the reference config, whose graph does not match eager: {graph.error}"
        )
    return Check(status=NOT_CHECKED, reason="the graph with the reference configs does not match eager and this "
                 f"config differs from them: {found.error}")  # fmt: skip


def deadline_of(started: float) -> float:
    """When host work that began with a capture call at ``started`` must end: :data:`BUDGET_ENV` from now at most,
    and never past the share :data:`SHARE` of that call's limit (the check never costs the capture)."""
    from harness.support.settings import timeout_s

    return min(started + SHARE * timeout_s("HARNESS_CALLBACK_TIMEOUT_S"), time.monotonic() + timeout_s(BUDGET_ENV))


class OverBudget(BaseException):
    """The check's deadline passed mid-run (a BaseException: neither Inductor's launcher nor the interpreter
    wraps it)."""


@contextlib.contextmanager
def until(deadline: float) -> Iterator[None]:
    """The block interrupted (:class:`OverBudget`) at ``deadline``; a capture child's main thread only."""
    import signal

    def over(signum: int, frame: Any) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, over)
    signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _guarded(call: Callable[[], Any], deadline: float) -> tuple[Any, Check | None]:
    """``call``'s result, or the check it ends as: past the deadline, a kernel's failure (the interpreter's gap:
    not checked; else the kernel's error), or the graph around the kernels failing on the host."""
    from harness.intake.inductor.inductor_launches import KernelRunError
    from harness.support.interpreter_patches import interpreter_limitation

    if time.monotonic() >= deadline:
        return None, Check(status=NOT_CHECKED, reason=over_budget())
    try:
        with until(deadline):
            return call(), None
    except OverBudget:
        return None, Check(status=NOT_CHECKED, reason=over_budget())
    except KernelRunError as exc:  # a kernel failed: the interpreter's gap, or the kernel's error
        why = interpreter_limitation(exc.__cause__) if exc.__cause__ is not None else ""
        if why:
            return None, Check(status=NOT_CHECKED, reason=f"{exc.kernel}: {why}")
        return None, Check(status="error", error=str(exc))
    except Exception as exc:  # noqa: BLE001 - the graph around the kernels (an extern call, the wrapper) on the host
        said = " ".join(str(exc).split())[:200]
        return None, Check(status=NOT_CHECKED, reason=f"the graph cannot run on the host: {type(exc).__name__}: {said}")


def _one(run: Callable[[Held], Any], reference: graph_reference.Reference, held: Held,
         tolerance: tuple[float, float], deadline: float) -> Check:  # fmt: skip
    got, failed = _guarded(lambda: run(held), deadline)
    if failed is not None:
        return failed
    return graph_reference.judge(got, reference, tolerance)
