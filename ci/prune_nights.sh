#!/usr/bin/env bash
# Keeps the newest KEEP nights under a GPU host's night folder ($HOME/harness-nightly/<run id>/, about 0.6 GB a
# night a model) and removes the rest; the GPU jobs call it after copying tonight's run for upload.
#   bash ci/prune_nights.sh DIR [KEEP]      (KEEP: 7)
set -euo pipefail
dir=$1 keep=${2:-7}
[ -d "$dir" ] || exit 0
# newest first by modification time; night folders only (digits: run or pipeline ids)
mapfile -t nights < <(find "$dir" -mindepth 1 -maxdepth 1 -type d -regex '.*/[0-9]+' -printf '%T@ %p\n' | sort -rn | cut -d' ' -f2-)
for old in "${nights[@]:$keep}"; do
  rm -rf -- "$old"
  echo "prune_nights: removed $old"
done
