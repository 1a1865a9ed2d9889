#!/usr/bin/env bash
# Installs the harness with triton==PIN into the venv VENV, for the triton-pin job (ci/workflows/triton-pin.yml).
#   ci/install_pin.sh VENV PIN [PIP_OPTION...]
# The project's constraints are kept but torch's and triton's. Every Linux x86_64 torch on plain PyPI asks for one
# triton exactly, so pip takes the torch release that asks for PIN. Where none does (3.9.0 on 2026-12-02), pip says
# ResolutionImpossible: then torch is installed with the triton it asks for, and PIN over it without dependencies,
# as tox.ini's triton39 env does. Extra pip options go to every pip call: tests/test_pypi_resolution.py passes
# --isolated --dry-run to resolve both paths against plain PyPI.
set -euo pipefail
venv=$1 pin=$2
shift 2
cd "$(dirname "$0")/.."
side=$(mktemp)
log=$(mktemp)
trap 'rm -f "$side" "$log"' EXIT
grep -v -e '^triton[=<>~!]' -e '^torch[=<>~!]' ci/constraints-cpu.txt > "$side"
pip=("$venv/bin/python" -m pip install -q "$@")
if "${pip[@]}" "triton==$pin" "torch>=2.8" "numpy<2.4" -c "$side" -e . 2> "$log"; then  # not [cpu]: it holds 3.6
  cat "$log" >&2
  echo "triton $pin with the torch release that asks for it"
elif grep -q ResolutionImpossible "$log"; then
  echo "no torch release asks for triton $pin: torch with the triton it asks for, then $pin over it"
  "${pip[@]}" -c "$side" -e ".[cpu]"
  "${pip[@]}" --no-deps "triton==$pin"
else
  cat "$log" >&2
  exit 1
fi
