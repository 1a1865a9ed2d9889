#!/usr/bin/env bash
# Issue 25 on one GPU host: the nightly matrix's part for this host (the GPU's target, plus the other vendor's
# static builds) run once whole, then as 2 shards one after the other, the shards' folder compared against the
# whole run with the compare gate, and reported as one night. Each run is a fresh `harness run` process with the
# caches the earlier runs filled (Triton's, Inductor's; GPU-host builds never come from the result cache).
#   bash benchmarks/sharded_night.sh OUT [TARGETS]       (TARGETS default h200,mi300x)
# OUT gets each run's results.json, report.md and log, the compare's output and exit code, and the night's report.
set -uo pipefail
out=${1:?OUT}
targets=${2:-h200,mi300x}
work=$(mktemp -d)  # the runs' artifacts stay here; OUT keeps what a reader needs
py=${HARNESS_PYTHON:-python3}
mkdir -p "$out"
run() {  # label, then harness run's extra arguments
  local label=$1
  shift
  local start=$SECONDS
  "$py" -m harness run matrices/nightly.yaml --targets "$targets" -n 8 --out "$work/$label" "$@" > "$out/${label//\//-}.log" 2>&1
  echo "$label: exit $? in $((SECONDS - start)) s" | tee -a "$out/summary.txt"
  mkdir -p "$out/$label" && cp "$work/$label"/results.json "$work/$label"/report.md "$out/$label/"
}
run single
run night/shard1 --shard 1/2
run night/shard2 --shard 2/2
"$py" -m harness compare "$work/single" "$work/night" > "$out/compare.txt" 2>&1
echo "compare single night: exit $?" | tee -a "$out/summary.txt"
"$py" -m harness report "$work/night" --out "$out/night-report/report.md" > "$out/night-report.log" 2>&1
echo "report night: exit $?" | tee -a "$out/summary.txt"
