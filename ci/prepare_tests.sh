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
set -euo pipefail
cd "$(dirname "$0")/.."
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
