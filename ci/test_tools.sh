#!/usr/bin/env bash
# Tools some tests use besides Python packages, installed when missing (idempotent, quiet):
#   chromium          Debian's, for tests/test_report_browser.py (report.html in a real browser)
#   gitlab-ci-local   npm's, into ci/.tools/ (with Debian's rsync, which it copies each job's checkout with), for
#                     tests/test_gitlab_pipeline.py: the GitLab pipeline run by a GitLab CI implementation. 4.73.0 is
#                     the newest that starts on Node 20 (later releases use Set.union, Node 22's).
# (actionlint comes from PyPI with the test extra.) Where one cannot be installed (no root, no apt) it says so; the tests that need it then
# skip with that reason, visibly.
cd "$(dirname "$0")/.."
GITLAB_CI_LOCAL=4.73.0
gcl=ci/.tools/gitlab-ci-local
if [ "$("$gcl/node_modules/.bin/gitlab-ci-local" --version 2>/dev/null)" != "$GITLAB_CI_LOCAL" ]; then
  if command -v npm >/dev/null 2>&1; then
    npm install --prefix "$gcl" --no-audit --no-fund --silent "gitlab-ci-local@$GITLAB_CI_LOCAL" >/dev/null 2>&1 \
      || echo "ci/test_tools.sh: npm could not install gitlab-ci-local: the GitLab pipeline test will skip"
  else
    echo "ci/test_tools.sh: no npm: the GitLab pipeline test will skip"
  fi &
fi
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v rsync >/dev/null 2>&1 || missing+=(rsync)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } >/dev/null 2>&1 \
      || echo "ci/test_tools.sh: could not install ${missing[*]}: the tests that need them will skip"
  else
    echo "ci/test_tools.sh: ${missing[*]} missing and no root apt-get: the tests that need them will skip"
  fi
fi
wait
exit 0
