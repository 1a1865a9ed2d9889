#!/usr/bin/env bash
# Launch-parity diagnosis on a GPU host: a nightly subset on the local target, then, for every config whose
# launched binary differed from the static artifact, whether the TTIR differed too. Writes to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 400 python3 -m harness run matrices/nightly.yaml --targets "${1:-h200}" -n 8 --force --out /tmp/parity -k "${2:-matmul or softmax}" \
  > "$OUT/parity_run.log" 2>&1
echo "run exit $?"
python3 - <<'PY' | tee "$OUT/parity_detail.txt"
import collections, json
d = json.load(open("/tmp/parity/results.json"))
c = collections.Counter()
for r in d["records"]:
    rt = r.get("runtime") or {}
    if r["mode"] == "compile" and rt.get("status") == "ok":
        c[(r["kernel"], r["dtype"], json.dumps(r["shape"]), rt.get("launch_parity"), rt.get("launch_parity_detail"))] += 1
for k, v in sorted(c.items(), key=str):
    print(v, *k)
PY
python3 - <<'PY' | tee -a "$OUT/parity_detail.txt"
import json
d = json.load(open("/tmp/parity/results.json"))
shown = 0
for r in d["records"]:
    rt = r.get("runtime") or {}
    if rt.get("launch_parity") == "differs" and shown < 3:
        shown += 1
        static = open("/tmp/parity/" + r["artifacts"]["ttir"]["path"]).read()
        line = next((l.strip()[:800] for l in static.splitlines() if "tt.func public" in l), "")
        print("==", r["kernel"], r["dtype"], r["shape"], r["config_id"], rt.get("launch_parity_detail"))
        print("static  :", line)
        print("launched:", rt["launched_binary"].get("ttir_func"))
        print("first_launch_s", rt.get("first_launch_s"), "keys", r.get("cache_key"), rt["launched_binary"].get("cache_key"))
        import glob, hashlib, os, subprocess, sys
        print("static cubin  ", r["artifacts"]["cubin"]["sha256"][:16], " launched cubin", rt["launched_binary"]["sha256"][:16])
        for meta in glob.glob(os.path.expanduser("~/.triton/cache/*/*.json")):
            try:
                if json.load(open(meta)).get("hash") == r.get("cache_key"):
                    cub = glob.glob(os.path.join(os.path.dirname(meta), "*.cubin"))
                    print("cache entry   ", [hashlib.sha256(open(c, "rb").read()).hexdigest()[:16] for c in cub], meta)
            except Exception:
                pass
        cfg = {k: v for k, v in r["config"].items() if k not in r["ignored_options"]}
        fresh = subprocess.run([sys.executable, "benchmarks/investigations/determinism_probe.py", "child", r["kernel"], repr(r["shape"]),
                                repr(cfg), "plain", r["dtype"]], capture_output=True, text=True,
                               env=dict(os.environ, TRITON_CACHE_DIR="/tmp/fresh-%d" % shown))
        print("fresh compile ", fresh.stdout.strip(), fresh.stderr.strip()[-300:])
PY
