"""Which of the collected cases are this shard's (``harness run --shard``): the split of
:mod:`harness.matrix.shards` over the cases of the installed Triton, balanced on build counts, or on a stored
run's case times when ``--shard-costs RUN`` names one (:mod:`harness.analysis.case_costs`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis import case_costs
from harness.matrix import shards
from harness.pytest_plugin.items import CaseItem
from harness.results.store import ResultsFileError, load_results


def case_ids(items: list[pytest.Item], installed: str | None, shard: shards.Shard, costs_from: str | None) -> set[str]:
    cases = [i.case for i in items if isinstance(i, CaseItem) and i.case.triton == installed]
    costs = {c.id: shards.case_cost(len(c.configs), c.is_interpret) for c in cases}  # in builds
    if costs_from:
        try:
            _, records = load_results(Path(costs_from))
        except ResultsFileError as exc:
            raise pytest.UsageError(f"--shard-costs: {exc}") from None
        measured, per_build = case_costs.measured(records)  # in seconds
        if measured and per_build:
            costs = {case: measured.get(case) or cost * per_build for case, cost in costs.items()}
    split = shards.assign_cases(costs, {c.id: c.shard_unit for c in cases}, shard.total)
    return {case for case, index in split.items() if index == shard.index}
