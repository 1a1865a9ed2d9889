"""``harness repro RUN CASE_ID``: one recorded build as a standalone Triton script (:mod:`harness.compiling.repro`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.common import EXIT_INPUT, EXIT_OK, err, load_run, shard_dirs, write_output
from harness.model.records import Record


def cmd_repro(args: argparse.Namespace) -> int:
    from harness.device import repro_launch
    from harness.matrix.reading import MatrixError, parse
    from harness.model.targets import get

    runs = []
    for d in shard_dirs(args.run):  # a night's folder: the records of every shard run in it
        stored = load_run(d)
        if stored is None:
            return EXIT_INPUT
        runs.append(stored)
    records = [r for _, recs in runs for r in recs]
    chosen = [
        r
        for r in records
        if r.mode == "compile"
        and r.case_id == args.case_id
        and (args.config is None or r.config_id == args.config)
        and (args.target is None or r.column == args.target)
    ]
    if len(chosen) != 1:
        err(_which(args, chosen, records))
        return EXIT_INPUT
    record = chosen[0]
    run = next(info for info, recs in runs if any(r is record for r in recs))
    matrix_path = Path(run.matrix.path) if run.matrix and run.matrix.path else None
    if matrix_path is None or not matrix_path.is_file():
        err(f"{args.run}: the run's matrix {matrix_path} is not there to say where kernel {record.kernel} comes from")
        return EXIT_INPUT
    check = repro_launch.recorded_check(record, records)
    wants_launch = args.launch or (check is not None and check.status == "mismatch")
    if args.launch and check is None:
        err(f"{args.case_id} {record.config_id}: no check of this config was recorded (GPU or CPU interpreter)")
        return EXIT_INPUT
    if wants_launch and not args.out:
        err(f"{args.case_id} {record.config_id}: the launch saves its inputs beside the script: give --out FILE.py")
        return EXIT_INPUT
    try:
        matrix = parse(matrix_path)
        entry = next(e for e in matrix.kernels if e.name == record.kernel)
        get(record.target)
    except (MatrixError, StopIteration) as exc:
        err(f"{matrix_path}: kernel {record.kernel} not found ({exc})")
        return EXIT_INPUT
    out = Path(args.out) if args.out else None
    pt = out.with_suffix(".pt") if out is not None and wants_launch and check is not None else None
    text, why = _written_in_a_child(  # the kernel's module is imported there, never in this process
        record,
        entry.ref,
        entry.import_env,
        f"harness run {args.run} ({run.start}, {run.host})",
        matrix.seed,
        check if pt is not None else None,
        pt,
    )
    if why:
        err(f"cannot write a standalone script for {args.case_id} {record.config_id}: {why}")
        return EXIT_INPUT
    if out is not None:
        if not write_output(out, text, "--out"):
            return EXIT_INPUT
        err(f"wrote {args.out}" + (f" and {pt}" if pt is not None else "") + f": python3 {args.out}")
    else:
        print(text, end="")
    return EXIT_OK


def _which(args: argparse.Namespace, chosen: list[Record], records: list[Record]) -> str:
    if not chosen:
        known = sorted({r.case_id for r in records if r.mode == "compile"})
        if args.case_id not in known:
            near = [c for c in known if c.split("[")[0] == args.case_id.split("[")[0]][:5]
            return f"{args.run}: no compile case {args.case_id}" + (
                f" (of this kernel: {', '.join(near)})" if near else ""
            )
        return f"{args.run}: {args.case_id} has no build of config {args.config} on {args.target or 'any target'}"
    configs = sorted({f"{r.config_id} ({r.column})" for r in chosen})
    return f"{args.case_id} holds {len(chosen)} builds: choose one with --config (and --target): {', '.join(configs)}"


_CHILD = r"""
import dataclasses
from harness.compiling import repro
from harness.device import repro_launch
from harness.model.records import Record
from harness.model.targets import get
e = ENTRIES[0]
imported()
say(0)
try:
    record = Record.from_dict(e["record"])
    target = get(record.target)
    launch = tensors = None
    if e["check"] is not None:
        check = repro_launch.RecordedCheck(**e["check"])
        launch, tensors = repro_launch.launch_data(record, e["ref"], target, e["seed"], check)
    text = repro.script(record, e["ref"], target, e["provenance"], launch)
    if tensors is not None:
        import torch

        torch.save(tensors, e["pt"])
    result(0, {"text": text})
except repro.ReproError as exc:
    result(0, {"error": str(exc)})
done()
"""


def _written_in_a_child(
    record: Record,
    ref: str,
    import_env: tuple[tuple[str, str], ...],
    provenance: str,
    seed: int,
    check: Any,
    pt: Path | None,
) -> tuple[str, str]:
    """(the script, "") or ("", why): made in a child that imports the kernel and runs its inputs and reference
    (:mod:`harness.intake.child_probe`); what it reports must be a script that parses."""
    import ast
    import dataclasses

    from harness.intake import child_probe

    entry = {
        "record": record.to_dict(),
        "ref": ref,
        "provenance": provenance,
        "seed": seed,
        "check": dataclasses.asdict(check) if check is not None else None,
        "pt": str(pt) if pt is not None else None,
    }
    got = child_probe.run(_CHILD, [entry], import_env)
    reported = got.results.get(0)
    if not got.clean or not isinstance(reported, dict):
        how = "did not finish in time" if got.timed_out else f"ended with exit code {got.returncode}"
        return "", f"the child that imports the kernel {how}" + (f" ({got.stderr_tail})" if got.stderr_tail else "")
    if isinstance(reported.get("error"), str):
        return "", reported["error"]
    text = reported.get("text")
    try:
        ast.parse(text if isinstance(text, str) else "(")
    except SyntaxError:
        return "", "the child reported a script that does not parse"
    return str(text), ""
