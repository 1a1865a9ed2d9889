#!/usr/bin/env bash
# The checks that keep the code as docs/architecture.md describes it, before the tests (configured in
# pyproject.toml): ruff's lint and format check, and mypy (strict on model/, results/ and analysis/). The import
# directions between the stage packages are a test (tests/test_import_graph.py).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
paths=(harness tests ci benchmarks kernels)
"$py" -m ruff check --quiet "${paths[@]}"
"$py" -m ruff format --check --quiet "${paths[@]}"
"$py" -m mypy
