#!/usr/bin/env bash
# Headless Chromium and its driver for the viewer's browser test (tests/test_viewer.py), from Debian's
# packages; installs only what is missing, says what it did. Idempotent: a second run changes nothing.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "chromium and chromedriver present: $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "no chromium/chromedriver and no apt-get: install them by hand (the viewer's browser test needs them)" >&2
    exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing chromium and chromium-driver with apt-get"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver
echo "installed: $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
