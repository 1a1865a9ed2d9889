#!/bin/bash
# one device call: the GPU tests, then a small compiled run whose configs are checked on the host
mkdir -p /tmp/site && python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD HARNESS_CACHE_DIR=/tmp/hc TRITON_CACHE_DIR=/tmp/tc
nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
mkdir -p /tmp/t1 && cp tests/data/compiled/models.py tests/data/compiled/planted.py /tmp/t1/
cat > /tmp/t1/m.yaml <<'YAML'
name: t1
targets: [h100, mi300x]
compiled:
  act:
    fn: models.py:activation
    inputs: models.py:act_inputs
    shapes: [{M: 64, N: 256}]
    dtypes: [fp16]
  mlp:
    fn: models.py:mlp
    factory: true
    inputs: models.py:mlp_inputs
    shapes: [{T: 16, D: 64}]
    dtypes: [fp32]
  wrong:
    fn: planted.py:wrong
    inputs: planted.py:wrong_inputs
    shapes: [{M: 16, N: 64}]
    dtypes: [fp32]
YAML
s=$(date +%s)
(cd /tmp/t1 && python3 -m harness compiled m.yaml --out out -n 2) > $OUT/compiled.txt 2>&1
echo "compiled rc=$? secs=$(( $(date +%s)-s ))"; tail -4 $OUT/compiled.txt
cp /tmp/t1/out/compiled.md $OUT/ 2>/dev/null
s=$(date +%s)
python3 -m pytest -p no:cacheprovider -p no:benchmark -q -rs tests/gpu -n 3 > $OUT/log.txt 2>&1
echo "gpu tests rc=$? secs=$(( $(date +%s)-s ))"; tail -15 $OUT/log.txt
