#!/usr/bin/env bash
# The checks that keep the code as docs/architecture.md describes it, configured in pyproject.toml: ruff's lint
# and format check, and mypy (strict on the packages pyproject.toml lists). A test of the suite runs this script
# beside the other tests (tests/test_static_checks.py). The import directions between the stage packages are a
# test too (tests/test_import_graph.py).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
paths=(harness tests ci benchmarks kernels)
"$py" -m ruff check --quiet "${paths[@]}"
"$py" -m ruff format --check --quiet "${paths[@]}"
"$py" -m mypy
