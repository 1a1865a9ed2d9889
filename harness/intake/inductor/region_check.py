"""An op's ``torch.compile`` regions checked on the host, each config of each kernel they launched, as a
``compiled:`` entry's kernels are (:mod:`harness.intake.inductor.compiled_check`).

After the op is captured under the face (each region compiled by Inductor as on the target, its kernels recorded,
:mod:`harness.intake.inductor.compiled_regions`), the op runs once more on the host: its inputs made on the CPU with the
entry's seed, each region called eagerly, what it was called with kept. The n-th region call of the capture is then
checked against the n-th of the host run: the graph Inductor compiled in that call, run on those arguments with one
kernel held to the config under test, against the region run eagerly on the same arguments. What cannot be checked
says why, per config: an op that launches Triton kernels of its own (its regions' inputs come from kernels the host
cannot run), a host run that raises or calls its regions otherwise than the capture did.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from harness.intake.inductor import compiled_regions
from harness.model.runtime import Check


def checks(op: Callable[..., Any], make_inputs: Callable[..., Any], shape: Mapping[str, int], dtype: str,
           own_launches: bool, started: float) -> dict[str, list[Check]]:  # fmt: skip
    """A check per config (Inductor's list, then coordinate descent's) of each kernel the regions launched since
    the capture began, by kernel name."""
    import torch

    from harness.intake.inductor import compiled, compiled_check, inductor_launches

    launched = dict(inductor_launches.launch_order(inductor_launches.recorder()))
    configs = {n: inductor_launches.candidates(k.autotuner) for n, k in launched.items()}

    def everyone(reason: str, names: Any = None) -> dict[str, list[Check]]:
        return {
            n: [Check(status=compiled_check.NOT_CHECKED, reason=reason) for _ in configs[n]] for n in names or configs
        }

    if not all(getattr(k.autotuner, "triton_interpret", False) for k in launched.values()):
        return everyone("the regions' kernels were not made for Triton's interpreter")
    if own_launches:
        return everyone("the op launches Triton kernels of its own, whose outputs its regions read: the host cannot "
                        "run them (a GPU run checks these configs)")  # fmt: skip
    calls = compiled_regions.calls()
    try:
        generator = torch.Generator(device="cpu").manual_seed(0)
        inputs = tuple(make_inputs(dict(shape), dtype, "cpu", generator))
        # the op's host run is user code too: held to the checks' deadline, so it never costs the capture
        with compiled_check.until(compiled_check.deadline_of(started)):
            with compiled_regions.on_host() as host, torch.no_grad():
                op(*inputs)
    except compiled_check.OverBudget:
        return everyone(f"the op's host run: {compiled_check.over_budget()}")
    except Exception as exc:  # noqa: BLE001 - the library's op, run on the host
        return everyone(f"the op on the host raised {type(exc).__name__}: {' '.join(str(exc).split())[:160]}")
    if len(host) != len(calls):
        return everyone(f"the op's host run called its regions {len(host)} times, its capture {len(calls)}")
    out: dict[str, list[Check]] = {}
    for call, given in zip(calls, host):
        names = [n for n in call.kernels if n not in out and n in launched]
        if call.graphs and names:
            out.update(compiled_check.check_graph(
                list(call.graphs), given[0], None, shape, dtype, False, {n: launched[n].autotuner for n in names},
                compiled.tolerance(dtype), started, given,
            ))  # fmt: skip
    missing = [n for n in configs if n not in out]
    return {**out, **(everyone("no region call that compiled it was found", missing) if missing else {})}


def tables(op: Callable[..., Any], make_inputs: Callable[..., Any], shape: Mapping[str, int], dtype: str,
           own_launches: bool, started: float) -> list[dict[str, Any]]:  # fmt: skip
    """The regions' kernels as a ``compiled:`` entry's capture gives them (:func:`harness.intake.
    inductor_launches.kernel_table`), each with its configs' checks."""
    kernels = compiled_regions.kernels()
    if not kernels:
        return []
    found = checks(op, make_inputs, shape, dtype, own_launches, started)
    return [{**k, "checks": [c.to_json() for c in found.get(str(k["name"]), [])]} for k in kernels]
