#!/usr/bin/env bash
# Installs what scripts/image/*.sh need on Debian bookworm: podman (with runc, which works on
# this host's cgroup setup where crun fails), buildah and debootstrap. Needs root; idempotent.
set -euo pipefail
missing=()
for tool in podman buildah debootstrap runc; do command -v "$tool" >/dev/null || missing+=("$tool"); done
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "missing: ${missing[*]}. Install them as root, then run again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends podman buildah debootstrap runc uidmap ca-certificates" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends podman buildah debootstrap runc uidmap ca-certificates >/dev/null
podman --version
