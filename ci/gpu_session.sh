#!/usr/bin/env bash
# One call on a GPU host (used on the lent H200): environment, GPU tests, the nightly matrix on the
# local GPU, and optionally a second full re-measure for timing fidelity. Logs and results go to $OUT.
#   bash ci/gpu_session.sh tests     GPU tests + nightly run 1
#   bash ci/gpu_session.sh fidelity  FA diagnosis, nightly run twice back to back, harness compare
#   bash ci/gpu_session.sh final     autotune-cost benchmark, nightly run twice back to back, harness compare
set -uo pipefail
mode=${1:-tests}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
targets=${HARNESS_GPU_TARGETS:-h200,mi300x}
if [ "$mode" = tests ]; then
  { date -u; nvidia-smi; python3 -c "import torch, triton, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'numpy', numpy.__version__)"; } > "$OUT/env.txt" 2>&1
  timeout 240 python3 -m pytest tests/gpu -q -x -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.log" | tail -4
  timeout 420 python3 -m harness run matrices/nightly.yaml --targets "$targets" -n 8 --out /tmp/run1 > "$OUT/run1.log" 2>&1
  echo "run1 exit $?"
  cp /tmp/run1/results.json "$OUT/run1_results.json"; cp /tmp/run1/report.md "$OUT/run1_report.md"
elif [ "$mode" = final ]; then
  timeout 200 python3 benchmarks/autotune_cost.py "$OUT" > "$OUT/autotune_cost.log" 2>&1
  echo "autotune_cost exit $?"
  timeout 250 python3 -m harness run matrices/nightly.yaml --targets "$targets" -n 8 --out /tmp/run1 > "$OUT/run1.log" 2>&1
  echo "run1 exit $?"
  timeout 150 python3 -m harness run matrices/nightly.yaml --targets "$targets" -n 8 --out /tmp/run2 > "$OUT/run2.log" 2>&1
  echo "run2 exit $?"
  python3 -m harness compare /tmp/run1 /tmp/run2 > "$OUT/compare.log" 2>&1
  echo "compare exit $?"
  for n in 1 2; do cp /tmp/run$n/results.json "$OUT/run${n}_results.json"; done
  cp /tmp/run1/report.md "$OUT/run1_report.md"
  cat "$OUT/autotune_cost.log" | tail -20; tail -3 "$OUT/compare.log"
else
  # fidelity: a full tuning run, then the same matrix again back to back (cached winners re-timed)
  timeout 60 python3 ci/fa_diagnose.py > "$OUT/fa_diagnose.log" 2>&1
  timeout 330 python3 -m harness run matrices/nightly.yaml --targets "$targets" -n 8 --out /tmp/run1 > "$OUT/run1.log" 2>&1
  echo "run1 exit $?"
  timeout 170 python3 -m harness run matrices/nightly.yaml --targets "$targets" -n 8 --out /tmp/run2 > "$OUT/run2.log" 2>&1
  echo "run2 exit $?"
  python3 -m harness compare /tmp/run1 /tmp/run2 > "$OUT/compare.log" 2>&1
  echo "compare exit $?"
  for n in 1 2; do cp /tmp/run$n/results.json "$OUT/run${n}_results.json"; done
  cp /tmp/run1/report.md "$OUT/run1_report.md"
  cat "$OUT/fa_diagnose.log"; tail -5 "$OUT/compare.log"
fi
tail -c 3000 "$OUT/run1.log" | tail -25
