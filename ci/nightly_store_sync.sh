#!/usr/bin/env bash
# Moves the nightly's baseline store (ci/nightly_store.py: baseline.json, night-<id>.tar.gz, history.sqlite)
# between the merge job and storage that nothing evicts.
#   bash ci/nightly_store_sync.sh pull|push github|gitlab NAME DIR
# github: the assets of the release tagged NAME (a pre-release the push creates; the job needs contents: write
#   and GH_TOKEN); assets the store pruned are deleted.
# gitlab: the project's generic package NAME, version 0 (CI_JOB_TOKEN; a download gets a file's latest upload).
# A store that does not exist yet pulls as an empty folder: the merge then says "No baseline" (exit 5) unless
# the night is started as the first.
set -euo pipefail
op=$1 engine=$2 name=$3 dir=$4
mkdir -p "$dir"
case "$engine/$op" in
  github/pull)
    if gh release view "$name" > /dev/null 2>&1; then
      gh release download "$name" --dir "$dir" --clobber
    else
      echo "no release $name yet: the store is empty"
    fi
    ;;
  github/push)
    gh release view "$name" > /dev/null 2>&1 || gh release create "$name" --prerelease --title "$name" \
      --notes "The nightly's baseline store (ci/nightly_store.py), written by its merge job."
    shopt -s nullglob
    files=("$dir"/*)
    if [ "${#files[@]}" -gt 0 ]; then gh release upload "$name" "${files[@]}" --clobber; fi
    gh release view "$name" --json assets --jq '.assets[].name' | while read -r asset; do
      [ -e "$dir/$asset" ] || gh release delete-asset "$name" "$asset" --yes
    done
    ;;
  gitlab/pull)
    api="$CI_API_V4_URL/projects/$CI_PROJECT_ID/packages/generic/$name/0"
    get() { curl -fsS -H "JOB-TOKEN: $CI_JOB_TOKEN" -o "$dir/$1" "$api/$1"; }
    if ! get baseline.json; then
      rm -f "$dir/baseline.json"
      echo "no package $name yet: the store is empty"
      exit 0
    fi
    get history.sqlite || rm -f "$dir/history.sqlite"
    for night in $(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(*[n for n in (d.get("night"), d.get("previous")) if n])' "$dir/baseline.json"); do
      get "night-$night.tar.gz"
    done
    ;;
  gitlab/push)
    api="$CI_API_V4_URL/projects/$CI_PROJECT_ID/packages/generic/$name/0"
    shopt -s nullglob  # a merge that stopped before the store was made leaves it empty: nothing to upload
    for f in "$dir"/*; do
      curl -fsS -H "JOB-TOKEN: $CI_JOB_TOKEN" --upload-file "$f" "$api/$(basename "$f")" > /dev/null
    done
    ;;
  *)
    echo "nightly_store_sync.sh: unknown '$op' with '$engine' (pull|push, github|gitlab)" >&2
    exit 2
    ;;
esac
