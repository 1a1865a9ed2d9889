#!/usr/bin/env bash
# What the test suite needs before it starts (README's test command, `.ci/run`): `.venv` with the project and its
# cpu and test extras at the pinned versions, and the tools some tests use (ci/test_tools.sh). Idempotent: an
# existing `.venv` is updated, not replaced. The static checks (ci/static_checks.sh: ruff, mypy) are a test
# (tests/test_static_checks.py) that runs beside the others from the session's start, in their idle moments.
#
# pip byte-compiles every module it installs (about 9,000 here) on one core: half of the install's time, most of
# it for modules no test imports. It installs without that; the modules the suite's processes import are then
# imported once with bytecode writing on (ci/warm_bytecode.py, torch's side and the rest in two processes), so that
# every later process finds their `.pyc` even where PYTHONDONTWRITEBYTECODE is set. Any other module is compiled
# when first imported.
#
# The virtual environment is made without pip when this Python has one of its own, which then installs today's pip
# into it (``pip --python``): ensurepip's copy, replaced at once, cost 4 of the 6 seconds the two steps took.
#
# The system tools (ci/test_tools.sh: apt's download and unpacking of chromium on a fresh machine) install beside
# pip, which leaves the second core idle. setuptools' notice that an editable install may be shadowed by a folder of
# the package's name is silenced: it is printed on every install, asks nothing of anyone, and is the one line a
# clean preparation would otherwise print.
#
# A CI machine's disk may be shared with other jobs: where the checkout's file system, or the temporary folder's,
# has less room than the preparation and the suite take (docs/performance.md, 2026-12-06 midday: the venv about
# 1.9 GB beside the checkout, the suite's temporary files about 0.4 GB at their peak, its caches in HOME 0.12 GB),
# it stops here in one line, not with two hundred "No space left on device" errors minutes later.
set -euo pipefail
cd "$(dirname "$0")/.."
free_mb() { df -Pm "$1" | awk 'NR == 2 {print $4}'; }
device_of() { df -P "$1" | awk 'NR == 2 {print $1}'; }
tmp="${TMPDIR:-/tmp}"
need_here=$(( $([ -d .venv ] && echo 0 || echo 2000) + 200 ))
need_tmp=500
if [ "$(device_of .)" = "$(device_of "$tmp")" ]; then
  need_here=$(( need_here + need_tmp ))
elif [ "$(free_mb "$tmp")" -lt "$need_tmp" ]; then
  echo "prepare_tests: $tmp has $(free_mb "$tmp") MB free; the suite's temporary files take about $need_tmp MB" >&2
  exit 1
fi
if [ "$(free_mb .)" -lt "$need_here" ]; then
  echo "prepare_tests: $(pwd) has $(free_mb .) MB free; the environment and the suite take about $need_here MB" >&2
  exit 1
fi
bash ci/test_tools.sh &
tools=$!
# the venv without ensurepip's pip, then today's pip into it; where this Python has no pip, or one older than
# --python (pip 22.3), ensurepip's as before
if ! { python3 -m venv --without-pip .venv \
    && python3 -m pip --python .venv/bin/python install -q -U pip 2>/dev/null; }; then
  python3 -m venv .venv
  .venv/bin/pip install -q -U pip
fi
PYTHONWARNINGS="ignore:Editable installation" .venv/bin/pip install -q --no-compile -e '.[cpu,test]' -c ci/constraints-cpu.txt
wait "$tools"
.venv/bin/python ci/warm_bytecode.py torch &
warming=$!
.venv/bin/python ci/warm_bytecode.py rest
wait "$warming"
