#!/usr/bin/env bash
# Nightly on a GPU host: keep the host's torch/triton (CUDA or ROCm build), install the
# harness without extras in a venv that sees them, run the matrix, keep the run directory.
# Exit codes are harness run's (README): 1 means some case failed, 2 bad input.
set -euo pipefail
matrix=${1:-matrices/nightly.yaml}
out=${2:-runs/nightly-$(date -u +%Y%m%d)}
python3 -m venv --system-site-packages .venv-gpu
.venv-gpu/bin/pip install -q -e .   # no [cpu] extra: torch and triton are the host's
# a retried nightly finishes what the interrupted one left (its records are kept), a fresh one starts
if [ -s "$out/records.jsonl" ]; then
  .venv-gpu/bin/harness run "$matrix" --resume "$out" -- --junitxml="$out-junit.xml"
else
  .venv-gpu/bin/harness run "$matrix" --out "$out" -- --junitxml="$out-junit.xml"
fi
