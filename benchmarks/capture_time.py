"""How long a compiled entry's capture takes per target (issue 69: the block and the loss within 10 s each on 2
cores): each entry of a matrix captured alone under each target's face, in a child of its own (torch, Dynamo and
Inductor imported, the face worn, the function compiled by real ``torch.compile``), wall and CPU seconds; then all
entries in one child per target, as ``harness compiled`` and a run do, and what each entry adds there.

    .venv/bin/python benchmarks/capture_time.py [MATRIX]   (default tests/data/compiled/model_code.yaml)
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children: the capture children's."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def requests_of(file: Path) -> tuple[list[str], list[Any]]:
    """A matrix file's targets and its compiled entries' capture requests."""
    from harness.matrix import compiled_entries
    from harness.support import yamlpos
    from harness.support.checking import Checker

    doc = yamlpos.load(file.read_text())
    requests = compiled_entries.requests(Checker(str(file), doc), doc.value["compiled"], file.resolve().parent)
    return list(doc.value["targets"]), requests


def main() -> int:
    from harness.intake.inductor.compiled_probe import capture

    file = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests" / "data" / "compiled" / "model_code.yaml"
    targets, requests = requests_of(file)
    rows = []
    for target in targets:
        for request in requests:
            wall, cpu = time.monotonic(), children_cpu()
            (outcome,) = capture([request], target)
            rows.append({"target": target, "entry": request.name, "alone_wall_s": round(time.monotonic() - wall, 2),
                         "alone_cpu_s": round(children_cpu() - cpu, 2), "ok": not outcome.why})  # fmt: skip
        wall, cpu = time.monotonic(), children_cpu()
        capture(requests, target)
        rows.append({"target": target, "entry": "(all, one child)", "alone_wall_s": round(time.monotonic() - wall, 2),
                     "alone_cpu_s": round(children_cpu() - cpu, 2), "ok": True})  # fmt: skip
    for row in rows:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
