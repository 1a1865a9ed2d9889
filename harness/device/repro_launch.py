"""The launch half of a ``harness repro`` script: the recorded check as data a plain Triton + torch script can replay.

A correctness finding (a GPU mismatch, or the CPU interpreter's) is reproduced by launching the same kernel, with the
same config, on the same inputs, and comparing with the same reference under the same tolerance. The script
cannot import the kernel's launcher or reference (they live in the harness's kernel files), so this module runs
them here instead: the inputs from the matrix's seed (on the GPU when this host has one, as the run made them, else
on the CPU), the reference, and the launcher's Python with Triton's ``run`` recorded rather than executed
(:func:`harness.intake.launches.capture.launches`). What comes out is the kernel's arguments by name (tensors saved beside
the script with ``torch.save``), the grid as numbers, which arguments are outputs and each output's reference and
tolerance. The script then calls ``KERNEL[grid](**args)`` as a user would.

Kernels whose launcher makes more than one launch are refused by name: their later launches read what the earlier
wrote, which one recorded call cannot replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.compiling.repro import ReproError
from harness.intake import loader
from harness.intake.launches import capture
from harness.model.records import Record
from harness.model.targets import Target


@dataclass(frozen=True)
class RecordedCheck:
    """What the harness found when it ran this config: where, on which shape, and the outcome."""

    where: str  # "gpu" | "interpreter"
    shape: dict[str, Any]
    status: str  # "ok" | "mismatch"
    error: str
    max_abs_err: float | None
    mismatched: int | None


def recorded_check(record: Record, records: list[Record]) -> RecordedCheck | None:
    """The check this build's config got: on the GPU (the build's own runtime), else under the CPU interpreter (the
    run's interpret record of the same kernel, dtype, meta-parameters and Triton version: the first check that failed, else the first that
    ran). None when neither ran."""
    runtime = record.runtime
    if runtime is not None and runtime.status in ("ok", "mismatch") and runtime.correctness is not None:
        check = runtime.correctness
        return RecordedCheck(
            "gpu", dict(record.shape), runtime.status, runtime.error or "", check.max_abs_err, check.mismatched
        )
    for other in records:
        # the interpreter checks a config's meta-parameters only; a merge may hold other Triton versions' checks
        same = (other.kernel, other.dtype, other.meta, other.triton) == (record.kernel, record.dtype, record.meta,
                                                                          record.triton)  # fmt: skip
        if other.mode != "interpret" or not same:
            continue
        checks = (
            [c for c in (other.correctness.checks or ()) if c.status in ("ok", "mismatch")] if other.correctness else []
        )
        if not checks:
            continue
        check = next((c for c in checks if c.status == "mismatch"), checks[0])
        return RecordedCheck(
            "interpreter", dict(check.shape or record.shape), str(check.status), check.error or "",
            check.max_abs_err, check.mismatched,
        )  # fmt: skip
    return None


def launch_data(
    record: Record, ref: str, target: Target, seed: int, check: RecordedCheck
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what the script's ``LAUNCH`` holds, the tensors to save beside it) for ``record``'s config on ``check``'s
    shape."""
    import torch

    from harness.authoring.correctness import output_items, poisoned_out, reference_first

    spec = loader.load(ref).for_target(target)
    if spec.compile_only:
        raise ReproError(f"{spec.name} is compile-only: it has no inputs, launcher or reference to replay")
    device = "cuda" if check.where == "gpu" and torch.cuda.is_available() else "cpu"
    gen = torch.Generator(device=device).manual_seed(seed)
    shape = check.shape
    inputs = spec.inputs(shape, record.dtype, device, gen)
    reference = reference_first(spec, inputs, shape)
    with capture.launches() as found:
        returned = spec.run(inputs, shape, record.config, **poisoned_out(spec, reference))
    if len(found) != 1:
        raise ReproError(f"its launcher made {len(found)} Triton launches; a script replays one")
    launch = found[0]
    args = dict(launch.args)
    args.update(record.meta)  # a decorated kernel's config reaches it through its autotuner, not the call
    options = {k: v for k, v in {**record.config, **launch.options}.items() if k in capture.OPTIONS}
    grid = launch.grid(dict(args, **options)) if callable(launch.grid) else launch.grid
    by_id = {id(v): name for name, v in args.items()}
    outputs: dict[str, dict[str, Any]] = {}
    expected: dict[str, Any] = {}
    refs = dict(output_items(reference, spec.outputs))
    for name, tensor in output_items(returned, spec.outputs):
        if id(tensor) not in by_id or name not in refs:
            raise ReproError(f"output {name} is not one of the kernel's arguments")
        atol, rtol = spec.tolerance(record.dtype, None if len(refs) == 1 else name)
        outputs[name] = {"arg": by_id[id(tensor)], "atol": atol, "rtol": rtol}
        expected[name] = refs[name].detach().cpu()
    originals = {id(t) for t in inputs if isinstance(t, torch.Tensor)}
    tensors = {k: v.detach().cpu() for k, v in args.items() if isinstance(v, torch.Tensor)}
    plain = (bool, int, float, str, type(None))
    scalars = {k: v for k, v in args.items() if not isinstance(v, torch.Tensor)}
    odd = sorted(k for k, v in scalars.items() if not isinstance(v, plain))
    if odd:
        raise ReproError(f"argument(s) {odd} are neither tensors nor plain values a script can carry")
    data = {
        "where": check.where,
        "made_on": device,
        "seed": seed,
        "shape": shape,
        "grid": [int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,))],
        "scalars": scalars,
        "options": options,
        "outputs": outputs,
        # outputs that are not inputs start as NaN (-1 for integers), as the harness's check has them: an element
        # the kernel never writes then fails
        "poison": sorted(o["arg"] for o in outputs.values() if id(args[o["arg"]]) not in originals),
        "recorded": {
            "status": check.status,
            "error": check.error,
            "max_abs_err": check.max_abs_err,
            "mismatched": check.mismatched,
        },
    }
    return data, {"args": tensors, "expected": expected}
