#!/usr/bin/env bash
# Why a compiled kernel's launched binary differs from the static build (launch parity "other cache key, other
# TTIR"): run one compiled entry on this GPU, then keep both TTIRs, both Inductor modules and the Triton cache's
# metadata for the diff (issue 58; docs/performance.md). Usage: compiled_parity_ttir.sh OUT
set -euo pipefail
out=$1
work=$(mktemp -d)
cp tests/data/compiled/models.py "$work/"
cat > "$work/m.yaml" <<'YAML'
name: parity-ttir
targets: [h100]
compiled:
  act:
    fn: models.py:activation
    inputs: models.py:act_inputs
    shapes: [{M: 1024, N: 4096}]
    dtypes: [bf16]
YAML
export TRITON_CACHE_DIR="$work/triton-cache" TORCHINDUCTOR_CACHE_DIR="$work/inductor-cache"
python -m harness run "$work/m.yaml" --out "$work/run" -n 1 --retune > "$out/run.log" 2>&1 || true
mkdir -p "$out/static" "$out/launched" "$out/modules"
find "$work/run/artifacts" -name 'kernel.ttir' -o -name 'kernel.inductor.py' | while read -r f; do
  d=$(echo "$f" | sed "s#$work/run/artifacts/##; s#/#_#g"); cp "$f" "$out/static/$d"; done
find "$work/triton-cache" "$work/inductor-cache" -name '*.ttir' -o -name '*.json' | grep -v __grp__ | while read -r f; do
  d=$(echo "$f" | sed "s#$work/##; s#/#_#g"); cp "$f" "$out/launched/$d"; done
find "$work/inductor-cache" -name '*.py' -path '*/c*' | head -20 | while read -r f; do cp "$f" "$out/modules/"; done
cp "$work/run/records.jsonl" "$out/"
env | grep -E '^(TRITON|TORCHINDUCTOR|HARNESS)' > "$out/env.txt" || true
