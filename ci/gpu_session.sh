#!/usr/bin/env bash
# One call on a GPU host (used on the lent H200): environment, GPU tests, the nightly matrix on the
# local GPU, and optionally a second full re-measure for timing fidelity. Logs and results go to $OUT.
#   bash ci/gpu_session.sh tests     GPU tests + nightly run 1
#   bash ci/gpu_session.sh fidelity  nightly run 2 (--retune) + harness compare against run 1
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
else
  timeout 480 python3 -m harness run matrices/nightly.yaml --targets "$targets" -n 8 --retune --out /tmp/run2 > "$OUT/run2.log" 2>&1
  echo "run2 exit $?"
  cp /tmp/run2/results.json "$OUT/run2_results.json"; cp /tmp/run2/report.md "$OUT/run2_report.md"
fi
log="$OUT/run1.log"; [ "$mode" = tests ] || log="$OUT/run2.log"
tail -c 6000 "$log" | tail -60
