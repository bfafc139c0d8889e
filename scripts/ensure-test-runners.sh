#!/usr/bin/env bash
# The C++, Rust and PHP test runners the canary tests run on this machine (tests/test_canaries.py: googletest's,
# `cargo test`'s and PHPUnit's canaries compiled and run by the real runners), from Debian's packages, the same versions the gym's
# cpp and rust toolchain images install; installs only what is missing, says what it did. Idempotent.
set -euo pipefail
exec "$(dirname "$0")/ensure-debian-packages.sh" "the canary tests of googletest, cargo and PHPUnit" \
    "/usr/bin/g++ /usr/bin/cmake /usr/include/gtest/gtest.h /usr/bin/cargo /usr/bin/rustc /usr/bin/phpunit" \
    g++ cmake libgtest-dev cargo rustc phpunit
