#!/usr/bin/env bash
# A Docker registry for the ray deployment's tests (tests/ray_cluster.py serves one on 127.0.0.1), from Debian's
# docker-registry package; installs it only when missing, says what it did. Idempotent. The package's own service
# is not used: the tests start and stop theirs by its PID.
set -euo pipefail
if [ -x /usr/bin/docker-registry ]; then
    echo "docker-registry present: $(/usr/bin/docker-registry --version 2>/dev/null || echo docker-registry)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "no docker-registry and no apt-get: install it by hand (the ray deployment's tests need it)" >&2
    exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing docker-registry with apt-get"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker-registry
echo "installed: $(/usr/bin/docker-registry --version 2>/dev/null || echo docker-registry)"
