#!/usr/bin/env bash
# A Docker registry for the ray deployment's tests (tests/ray_cluster.py serves one on 127.0.0.1), from Debian's
# docker-registry package; installs it only when missing, says what it did. Idempotent. The package's own service
# is not used: the tests start and stop theirs by its PID.
set -euo pipefail
exec "$(dirname "$0")/ensure-debian-packages.sh" "the ray deployment's tests" /usr/bin/docker-registry docker-registry
