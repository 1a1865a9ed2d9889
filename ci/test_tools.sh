#!/usr/bin/env bash
# Tools some tests use besides Python packages, installed when missing (idempotent, quiet):
#   chromium    Debian's, for tests/test_report_browser.py (report.html in a real browser)
# (actionlint comes from PyPI with the test extra.) Where one cannot be installed (no root, no apt) it says so; the tests that need it then
# skip with that reason, visibly.
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; } >/dev/null 2>&1 \
      || echo "ci/test_tools.sh: could not install chromium: the browser tests will skip"
  else
    echo "ci/test_tools.sh: chromium missing and no root apt-get: the browser tests will skip"
  fi
fi
exit 0
