#!/usr/bin/env bash
# Compiled capture on the torch a plain-PyPI user gets on a Linux machine without a GPU: PyPI's CUDA build (torch
# 2.11 and 2.13 are CUDA 13 builds there, several GB with their nvidia-* wheels), whose CUDA runtime finds no
# driver. The suite runs on the CPU build (ci/constraints-cpu.txt resolves it where a CPU index is configured), so
# this is its own job (ci/workflows/plain-pypi.yml, weekly and on changes to the capture): a fresh venv with that
# torch and the harness (no extra: the harness never installs torch), then `harness compiled` on the model-code
# matrix (tests/data/compiled/model_code.yaml) under h100 and mi300x. Every entry must capture on both; the time
# and the venv's disk are printed (docs/performance.md records a run).
#
#   bash ci/plain_pypi_capture.sh TORCH_VERSION [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?the torch version to install from PyPI, e.g. 2.11.0}"
work="${2:-$(mktemp -d)}"
venv="$work/venv-torch-$version"
start=$(date +%s)
python3 -m venv "$venv"
"$venv/bin/pip" install -q -U pip
# the CUDA build is what PyPI serves for Linux x86_64 (a configured CPU index or wheel folder would serve the CPU
# build under the same version: left out here); `transformers` for the Llama layer of the matrix
env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL -u PIP_CONSTRAINT PIP_CONFIG_FILE=/dev/null \
  "$venv/bin/pip" install -q "torch==$version" "transformers>=4.50,<5" -e .
installed=$(($(date +%s) - start))
"$venv/bin/python" - <<'EOF'
import torch

assert torch.version.cuda, f"torch {torch.__version__} is not a CUDA build: this job checks PyPI's CUDA build"
print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), a GPU visible: {torch.cuda.is_available()}")
EOF
start=$(date +%s)
# no GPU is used, whatever the machine has: the capture's face is the only device
CUDA_VISIBLE_DEVICES="" "$venv/bin/harness" compiled tests/data/compiled/model_code.yaml --out "$work/capture"
captured=$(($(date +%s) - start))
"$venv/bin/python" - "$work/capture/results.json" <<'EOF'
import collections, json, sys

records = json.load(open(sys.argv[1]))["records"]
assert records and all(r["status"] == "ok" for r in records), [r["error"] for r in records if r["status"] != "ok"]
graphs = collections.Counter((r["inductor"]["entry"], r["target"], len(r["inductor"]["graph"])) for r in records)
for (name, target, kernels), configs in sorted(graphs.items()):
    print(name, target, kernels, "kernels,", configs, "configs built")
EOF
echo "plain-pypi torch $version: install ${installed} s, capture ${captured} s, venv $(du -sh "$venv" | cut -f1)"
