"""Validation and ``list`` stay linear in the number of shapes: a matrix of 64,000 cases validates in seconds.

The attack: a generated matrix with tens of thousands of shapes (a sweep script's output). The duplicate checks
were ``x in list[:i]``, quadratic: 50,000 shapes took 132 s of CPU. Measured here as the CPU time of the child
at two sizes eight times apart, less the time of a one-shape matrix (the imports): linear work grows about eight
times, quadratic work sixty-four. A ratio, not a wall-clock limit, so a loaded machine only makes it slower.
"""

from __future__ import annotations

import resource
from pathlib import Path

from helpers import run_cli

SMALL, LARGE = 4_000, 32_000  # LARGE x 2 targets = 64,000 cases


def _matrix(path: Path, shapes: int) -> Path:
    rows = "".join(f"      - {{N: {1000 + i}}}\n" for i in range(shapes))
    path.write_text(
        "name: wide\ntargets: [h100, mi300x]\nkernels:\n  vector_add:\n    dtypes: [fp32]\n"
        f"    interpret: false\n    shapes:\n{rows}"
    )
    return path


def _cpu_s(*args: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = run_cli(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-1000:]
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_validate_and_list_grow_linearly_with_the_shapes(tmp_path: Path) -> None:
    one, small, large = (_matrix(tmp_path / f"m{n}.yaml", n) for n in (1, SMALL, LARGE))
    for command in ("validate", "list"):
        base = min(_cpu_s(command, str(one)) for _ in range(2))
        t_small = _cpu_s(command, str(small)) - base
        t_large = _cpu_s(command, str(large)) - base
        ratio = t_large / max(t_small, 0.05)
        # linear: ~8; quadratic: ~64. 24 leaves room for noise in the small run's few tenths of a second
        assert ratio < 24, f"{command}: {SMALL} shapes {t_small:.2f} s, {LARGE} shapes {t_large:.2f} s (x{ratio:.1f})"
    dup = tmp_path / "dup.yaml"
    dup.write_text(large.read_text() + "      - {N: 1000}\n")
    said = run_cli("validate", str(dup))
    assert said.returncode == 2 and f"dup.yaml:{LARGE + 8}:" in said.stderr + said.stdout, said.stderr
    assert "listed twice" in said.stderr + said.stdout
