#!/usr/bin/env bash
# Debian packages a test needs, installed with apt-get only when one of the files they provide is missing; says what it
# did. Idempotent. Usage: scripts/ensure-debian-packages.sh "WHAT NEEDS THEM" "FILE..." PACKAGE...
#   scripts/ensure-debian-packages.sh "the viewer's browser test" "/usr/bin/chromium /usr/bin/chromedriver" chromium chromium-driver
set -euo pipefail
needed_by=$1 files=$2
shift 2
missing=false
for file in $files; do [ -e "$file" ] || missing=true; done
if ! $missing; then
    echo "$* present"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "no $* and no apt-get: install them by hand ($needed_by needs them)" >&2
    exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing $* with apt-get"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@"
echo "installed: $*"
