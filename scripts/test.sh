#!/usr/bin/env bash
# The whole test suite, as the README and CI run it: tools, build, lint, type-check, tests.
# Ends with a line "N passed, N failed" summarising every vitest test.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

# Installs Debian packages as root, or says what to run and stops: CI starts from a bare machine.
install_debian() {
  local what=$1
  shift
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  else
    echo "$what missing. Install as root, then run again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $*" >&2
    exit 1
  fi
}

step "tools: promtool, prometheus, alertmanager, amtool"
if ! command -v promtool >/dev/null || ! command -v prometheus-alertmanager >/dev/null; then
  install_debian "promtool and prometheus-alertmanager are" prometheus prometheus-alertmanager
fi
promtool --version | head -1

step "tools: chromium (for the status page's browser test)"
# Debian's chromium, driven by playwright-core; a browser is never downloaded.
if ! [ -x /usr/bin/chromium ]; then
  install_debian "chromium is" chromium
fi
/usr/bin/chromium --version 2>/dev/null | head -1

step "tools: tinyproxy (the egress proxy the proxy tests go through)"
# Debian's package; its service is not started: the tests run it in the foreground (tinyproxy -d).
if ! command -v tinyproxy >/dev/null && ! [ -x /usr/bin/tinyproxy ]; then
  install_debian "tinyproxy is" tinyproxy
fi
/usr/bin/tinyproxy -v 2>&1 | head -1 || true

step "build"
npm run --silent build

step "lint and type-check"
npm run --silent lint
npm run --silent typecheck

step "tests"
rm -f test-results/vitest.json
status=0
npx vitest run || status=$?

if [ -f test-results/vitest.json ]; then
  node -e '
    const r = require("./test-results/vitest.json");
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
    if (r.numTotalTests === 0) process.exitCode = 1;
  ' || status=1
else
  echo "0 passed, 1 failed"
  status=1
fi
exit "$status"
