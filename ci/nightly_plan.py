"""The night's plan: from ``ci/nightly-plan.yaml``, the jobs' matrices and the runs the merge must find.

    python ci/nightly_plan.py matrix static|gpu        one line of JSON, the job's strategy matrix (GitHub fromJSON)
    python ci/nightly_plan.py expected static|all --out FILE   the night's expected runs, written before jobs run

A run is named by its folder under the collected artifacts: ``static-triton36/shard2``, ``gpu-h100/shard1``.
``static`` is what the static-only merge expects; ``all`` adds the GPU models.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

PLAN = Path(__file__).resolve().parent / "nightly-plan.yaml"


@dataclass(frozen=True)
class ExpectedRun:
    """One job's run: its unit (the folder of its shards) and which shard of how many."""

    unit: str
    shard: int
    of: int

    @property
    def path(self) -> str:
        return f"{self.unit}/shard{self.shard}"


def load(path: Path = PLAN) -> dict[str, dict[str, list[str] | int]]:
    data = yaml.safe_load(path.read_text())
    for part, names in (("static", "pins"), ("gpu", "models")):
        body = data.get(part) if isinstance(data, dict) else None
        if (
            not isinstance(body, dict)
            or not isinstance(body.get(names), list)
            or not isinstance(body.get("shards"), int)
        ):
            raise SystemExit(f"{path}: '{part}' needs a list '{names}' and an integer 'shards'")
    return data  # type: ignore[no-any-return]


def expected(scope: str, path: Path = PLAN) -> list[ExpectedRun]:
    plan = load(path)
    parts = [("static", "pins", "static-triton")] + ([("gpu", "models", "gpu-")] if scope == "all" else [])
    out = []
    for part, names, prefix in parts:
        body = plan[part]
        n = int(body["shards"])  # type: ignore[call-overload]
        for name in body[names]:  # type: ignore[union-attr]
            out += [ExpectedRun(f"{prefix}{name}", i, n) for i in range(1, n + 1)]
    return out


def read_expected(path: Path) -> list[ExpectedRun]:
    """The manifest the plan job wrote (``expected`` below)."""
    return [ExpectedRun(r["unit"], int(r["shard"]), int(r["of"])) for r in json.loads(path.read_text())["runs"]]


def matrix(part: str, path: Path = PLAN) -> dict[str, list[str] | list[int]]:
    """The job's strategy matrix: one key for the pin or model, the shard, and ``of`` (one value: how many)."""
    body = load(path)[part]
    names = body["pins" if part == "static" else "models"]
    key = "triton" if part == "static" else "runner"
    n = int(body["shards"])  # type: ignore[call-overload]
    return {key: [str(x) for x in names], "shard": list(range(1, n + 1)), "of": [n]}  # type: ignore[union-attr]  # type: ignore[union-attr, call-overload]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("matrix", help="a job's strategy matrix as one line of JSON")
    m.add_argument("part", choices=["static", "gpu"])
    e = sub.add_parser("expected", help="write the night's expected runs")
    e.add_argument("scope", choices=["static", "all"])
    e.add_argument("--out", type=Path, required=True)
    ap.add_argument("--plan", type=Path, default=PLAN)
    args = ap.parse_args(argv)
    if args.what == "matrix":
        print(json.dumps(matrix(args.part, args.plan), separators=(",", ":")))
        return 0
    runs = expected(args.scope, args.plan)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"scope": args.scope, "runs": [r.__dict__ for r in runs]}, indent=1) + "\n")
    print(f"nightly_plan: {len(runs)} run(s) expected ({args.scope}) in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
