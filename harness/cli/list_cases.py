"""``harness list``: the case ids of a matrix that ``harness run`` (with the same ``-k`` and ``--targets``) would run,
one a line, as pytest collects them (the xdist workers collect the same), without compiling anything."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

from harness.cli.common import _PYTEST_TO_EXIT, EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, default_matrix, err, shard_ok
from harness.cli.run import read_matrix


def cmd_list(args: argparse.Namespace) -> int:
    matrix_path = Path(args.matrix) if args.matrix else default_matrix()
    if read_matrix(matrix_path, args.targets) is None:
        return EXIT_INPUT
    if args.shard and not shard_ok(args.shard):
        return EXIT_INPUT
    from harness.cli import inner_pytest

    argv = [
        str(matrix_path.absolute()),
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
        "--noconftest",
    ]
    argv += ["--harness-targets", args.targets] if args.targets else []
    argv += ["-k", args.k] if args.k else []
    argv += ["--harness-shard", args.shard] if args.shard else []
    collected = io.StringIO()
    with contextlib.redirect_stdout(collected):
        code = inner_pytest.main(argv, xdist=False)
    ids = [line.rsplit("::", 1)[-1] for line in collected.getvalue().splitlines() if "::" in line]
    if code not in (0, 5):
        err(collected.getvalue().strip().splitlines()[-1] if collected.getvalue().strip() else "collection failed")
        return _PYTEST_TO_EXIT.get(code, EXIT_INTERNAL)
    for case_id in ids:
        print(case_id)
    err(
        f"{len(ids)} case(s)"
        + (f" selected by -k {args.k!r}" if args.k else "")
        + (f" in shard {args.shard}" if args.shard else "")
    )
    return EXIT_OK
