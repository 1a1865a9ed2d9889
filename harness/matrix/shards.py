"""A matrix's cases split over N shards, one CI job each: the CI engine schedules the jobs, the harness only says
which cases are whose.

The split is a function of the case ids and their expected costs alone, so every job (and every xdist worker in a
job) computes the same one without talking to the others, and a case lands in exactly one shard. What is split are
units, not single cases: the cases one report row joins (``Case.shard_unit``: a kernel, dtype, shape and Triton over
every target and environment) stay together, so each shard's own results — a config's portability across vendors,
a target decided by its default build beside an opt-in environment's — are whole, not "incomplete" because the
other half ran elsewhere. Two properties decide how: **balance** (no shard much longer than the others: the night
ends with its slowest shard) and **stability** (a grown matrix moves few existing cases, so a shard's caches on its
runner stay useful). Each unit ranks the shards by a hash of (unit, shard) (rendezvous hashing: adding a unit
changes no other unit's ranking); units are placed in the order of a hash of their names, each in the first shard
of its ranking that stays within ``(1 + SLACK)`` of an even share of the total cost. Cost: a case's builds
(configs), an interpreter check a third of a build (measured: 0.2 s against 0.6 s on 2 cores). Measured on this
repository's matrices (``tests/test_shards.py``): the largest of 3, 4 or 7 shards within 1.13x the mean; a kernel
added to the nightly matrix moves at most 9% of its other cases (the 53-case default matrix, 25 units that differ
up to 12x in cost: at most 26%). A smaller slack balances tighter and moves more (0.1: 1.10x, 16%).

``--shard I/N`` names the shard (1-based); ``--shard auto`` reads it from the CI engine's own variables:
``HARNESS_SHARD`` ("I/N", e.g. set from a GitHub Actions matrix), GitLab's ``CI_NODE_INDEX``/``CI_NODE_TOTAL``
(``parallel:``, 1-based), Buildkite's ``BUILDKITE_PARALLEL_JOB``/``BUILDKITE_PARALLEL_JOB_COUNT`` (0-based), or a
Kubernetes Indexed Job's ``JOB_COMPLETION_INDEX`` (0-based) with ``HARNESS_SHARD_TOTAL``.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

SLACK = 0.15  # a shard may take this much more than an even share before a case goes to its next choice
INTERPRET_WEIGHT = 1 / 3  # an interpreter check against a build


class ShardError(ValueError):
    """A shard that cannot be: said in one line, naming where it came from."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    total: int
    source: str = "--shard"  # where it was read from

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def _checked(index: int, total: int, source: str) -> Shard:
    if total < 1 or not 1 <= index <= total:
        raise ShardError(f"{source}: shard {index}/{total} does not exist (1 <= I <= N)")
    return Shard(index, total, source)


def _ints(source: str, *values: str) -> list[int]:
    try:
        return [int(v) for v in values]
    except ValueError:
        raise ShardError(f"{source}: {'/'.join(values)!r} is not a shard (whole numbers expected)") from None


def parse(text: str, environ: Mapping[str, str]) -> Shard:
    """``I/N`` (1-based), or ``auto``: the CI engine's own variables (see the module)."""
    text = text.strip()
    if text != "auto":
        found = re.fullmatch(r"(\d+)\s*/\s*(\d+)", text)
        if not found:
            raise ShardError(f"--shard: {text!r} is neither I/N (e.g. 2/4) nor auto")
        return _checked(int(found.group(1)), int(found.group(2)), "--shard")
    if environ.get("HARNESS_SHARD"):
        shard = parse(environ["HARNESS_SHARD"], {})
        return Shard(shard.index, shard.total, "HARNESS_SHARD")
    engines = (
        ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),  # GitLab parallel:
        ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),  # Buildkite parallelism:
        ("JOB_COMPLETION_INDEX", "HARNESS_SHARD_TOTAL", 0),  # Kubernetes Indexed Job
    )
    for index_var, total_var, base in engines:
        if environ.get(index_var) is not None and environ.get(total_var) is not None:
            source = f"{index_var}/{total_var}"
            index, total = _ints(source, environ[index_var], environ[total_var])
            return _checked(index - base + 1, total, source)
        if environ.get(index_var) is not None:
            raise ShardError(f"--shard auto: {index_var} is set but {total_var} is not")
    raise ShardError(
        "--shard auto: no shard in the environment (HARNESS_SHARD, CI_NODE_INDEX/CI_NODE_TOTAL, "
        "BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT, or JOB_COMPLETION_INDEX with HARNESS_SHARD_TOTAL)"
    )


def _h(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def assign(costs: Mapping[str, float], total: int) -> dict[str, int]:
    """Case id -> its shard (1-based), for cases of the given expected costs."""
    if total <= 1:
        return {case: 1 for case in costs}
    capacity = (1 + SLACK) * sum(costs.values()) / total
    load = [0.0] * (total + 1)
    out: dict[str, int] = {}
    for case in sorted(costs, key=lambda c: (_h(c), c)):
        ranking = sorted(range(1, total + 1), key=lambda s: (_h(f"{case}\0{s}"), s))
        cost = costs[case]
        shard = next((s for s in ranking if load[s] + cost <= capacity), min(ranking, key=lambda s: load[s]))
        out[case] = shard
        load[shard] += cost
    return out


def assign_cases(costs: Mapping[str, float], unit_of: Mapping[str, str], total: int) -> dict[str, int]:
    """Case id -> its shard, the cases of one unit (``unit_of``: case id -> unit, ``Case.shard_unit``) together:
    the units are split by their cases' summed costs."""
    units: dict[str, float] = defaultdict(float)
    for case, cost in costs.items():
        units[unit_of[case]] += cost
    split = assign(units, total)
    return {case: split[unit_of[case]] for case in costs}


def case_cost(configs: int, interpret: bool) -> float:
    """Expected cost of a case, in builds."""
    return max(configs, 1) * (INTERPRET_WEIGHT if interpret else 1.0)
