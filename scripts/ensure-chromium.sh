#!/usr/bin/env bash
# Headless Chromium and its driver for the viewer's browser test (tests/test_viewer.py), from Debian's
# packages; installs only what is missing, says what it did. Idempotent: a second run changes nothing.
set -euo pipefail
exec "$(dirname "$0")/ensure-debian-packages.sh" "the viewer's browser test" "/usr/bin/chromium /usr/bin/chromedriver" chromium chromium-driver
