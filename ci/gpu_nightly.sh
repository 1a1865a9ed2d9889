#!/usr/bin/env bash
# Nightly on a GPU host: keep the host's torch/triton (CUDA or ROCm build), install the
# harness without extras in a venv that sees them, run the matrix, keep the run directory,
# and pytest's JUnit XML beside it (<out>-junit.xml).
#   bash ci/gpu_nightly.sh [MATRIX] [OUT]
# HARNESS_PYTHON=/path/to/python uses an environment that already has the harness, torch and
# triton instead of making .venv-gpu (the tests do; so can a host image that ships them).
# Exit codes are harness run's (docs/usage.md): 1 means some case failed, 2 bad input.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
matrix=${1:-$repo/matrices/nightly.yaml}
out=${2:-runs/nightly-$(date -u +%Y%m%d)}
if [ -n "${HARNESS_PYTHON:-}" ]; then
  py=$HARNESS_PYTHON
else
  python3 -m venv --system-site-packages "$repo/.venv-gpu"
  "$repo/.venv-gpu/bin/pip" install -q -e "$repo"   # no [cpu] extra: torch and triton are the host's
  py=$repo/.venv-gpu/bin/python
fi
# One GPU per runner service: two services on one multi-GPU host would time their kernels on the same GPU.
if [ -z "${CUDA_VISIBLE_DEVICES:-}${HIP_VISIBLE_DEVICES:-}${ROCR_VISIBLE_DEVICES:-}" ]; then
  count=$("$py" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2> /dev/null || echo 0)
  if [ "$count" -gt 1 ]; then
    echo "gpu_nightly.sh: this host has $count GPUs and the runner sets none of CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES: give each runner service one GPU (docs/operations.md, The nightly)" >&2
    exit 2
  fi
fi
# a retried nightly finishes what the interrupted one left (its records are kept), a fresh one starts
# HARNESS_SHARD=I/N (a CI matrix entry) runs that shard of the matrix only (harness run --shard auto)
shard=()
if [ -n "${HARNESS_SHARD:-}" ]; then shard=(--shard auto); fi
attempt() {
  if [ -s "$out/records.jsonl" ]; then
    "$py" -m harness run "$matrix" --resume "$out" "${shard[@]}" -- --junitxml="$out-junit.xml"
  else
    "$py" -m harness run "$matrix" --out "$out" "${shard[@]}" -- --junitxml="$out-junit.xml"
  fi
}
# exit 0/1 (a finding), 2 (bad input), 4 (nothing selected) are answers; anything else (3: interrupted or an
# internal error, a killed process) is tried once more, resuming, and a pass on that retry is marked flaky beside
# the run ($out.flaky), which ci/nightly_merge.py lists in the night's summary
set +e
attempt
code=$?
if [ "$code" -ne 0 ] && [ "$code" -ne 1 ] && [ "$code" -ne 2 ] && [ "$code" -ne 4 ] && [ "${HARNESS_NO_RETRY:-}" != 1 ]; then
  attempt
  again=$?
  echo "first attempt exited $code, the retry $again" > "$out.flaky"
  code=$again
fi
exit "$code"
