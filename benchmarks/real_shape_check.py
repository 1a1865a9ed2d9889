"""What a compiled entry's capture and host check cost at a model's real shape (issue 78: a decoder block and its
loss at B1 T2048 D2048 H16 V32000 within 60 CPU-s per target on 2 cores): each entry captured under each target's
face in a child of its own, every config checked at the entry's shape, wall and CPU seconds (the child's), and what
the checks said.

    HARNESS_RESULT_CACHE=0 .venv/bin/python benchmarks/real_shape_check.py [MATRIX]
        (default benchmarks/real_shape_check.yaml; HARNESS_RESULT_CACHE=0: captured anew, not remembered)
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> int:
    from capture_time import children_cpu, requests_of  # beside this script: its timing and matrix reading

    from harness.intake.inductor.compiled_probe import capture

    file = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "benchmarks" / "real_shape_check.yaml"
    targets, requests = requests_of(file)
    for target in targets:
        for request in requests:
            wall, cpu = time.monotonic(), children_cpu()
            (outcome,) = capture([request], target)
            said: Counter[str] = Counter()
            for _, _, table in outcome.tables:
                if isinstance(table, dict):
                    said.update(c.get("status") or "" for k in table["kernels"] for c in k["checks"])
            print(json.dumps({"target": target, "entry": request.name, "wall_s": round(time.monotonic() - wall, 1),
                              "cpu_s": round(children_cpu() - cpu, 1), "why": outcome.why,
                              "checks": dict(said)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
