"""``harness validate``: check matrices without running them; ``harness targets``: the catalogue."""

from __future__ import annotations

import argparse
from typing import Any

from harness.cli.common import EXIT_INPUT, EXIT_OK
from harness.matrix.reading import MatrixError, parse
from harness.model.targets import catalogue
from harness.support import tritoncompat


def _compile_count(matrix: Any) -> int:
    """Builds a run makes per Triton version: the compile cases' configs (each shape's valid ones, per dtype,
    per target column of the compile-environment sweep), counted from the very cases a run expands."""
    from harness.matrix.cases import expand

    cases = [c for c in expand(matrix, "installed") if not c.is_interpret]
    return sum(len(c.configs) for c in cases) // max(1, len(matrix.triton))


def cmd_validate(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for file in args.files:
        try:
            matrix = parse(file)
        except MatrixError as exc:
            for problem in exc.problems:
                print(problem)
            status = EXIT_INPUT
            continue
        from harness.execution.agreement import disagreements as launch_disagreements

        disagreements = launch_disagreements(matrix)
        for line in disagreements:
            print(f"{file}: {line}")
        if disagreements:
            status = EXIT_INPUT
            continue
        n = _compile_count(matrix)
        columns = len(
            {(t, e.name) for k in matrix.kernels for t in matrix.targets for e in matrix.environments_for(t, k)}
        )
        sweep = (
            f" in {columns} target columns with the compile-environment sweep" if columns > len(matrix.targets) else ""
        )
        print(
            f"{file}: ok ({len(matrix.kernels)} kernels, {len(matrix.targets)} targets{sweep}, {n} compiles per Triton version)"
        )
        installed = tritoncompat.installed_triton_version()
        for pin in matrix.triton:
            print(f"  triton {tritoncompat.describe_pin(pin, installed)}")
    return status


def cmd_targets(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    rows = []
    for t in catalogue().values():
        rows.append(
            [
                t.name,
                t.vendor,
                t.arch,
                t.warp_size,
                t.shared_per_block,
                t.max_threads_per_block,
                t.max_regs_per_thread,
                t.sm_count,
                t.hbm_tbps,
                *("-" if v is None else v for v in (t.fp8_tflops, t.fp16_tflops, t.tf32_tflops, t.fp32_tflops)),
            ]
        )
    print(
        tabulate(
            rows,
            headers=[
                "target",
                "vendor",
                "arch",
                "warp",
                "smem/LDS per block B",
                "threads/block",
                "regs/thread",
                "SMs/CUs",
                "HBM TB/s",
                "fp8 TFLOP/s",
                "fp16/bf16 TFLOP/s",
                "tf32 TFLOP/s",
                "fp32 TFLOP/s",
            ],
        )
    )
    from harness.intake.virtual_device import face

    faceless = [t for t in catalogue() if t not in face.known()]
    print(f"\ncaptures (ops: and compiled: entries) take {', '.join(face.known())}"
          + (f"; not {', '.join(faceless)} (no virtual device yet)" if faceless else ""))  # fmt: skip
    if args.sources:
        for t in catalogue().values():
            print(f"\n{t.name}:")
            for key, source in t.sources:
                print(f"  {key}: {source}")
    return EXIT_OK
