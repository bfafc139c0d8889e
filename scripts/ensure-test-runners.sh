#!/usr/bin/env bash
# The C++, Rust, PHP and Ruby test runners the canary tests run on this machine (tests/test_canaries.py: googletest's,
# `cargo test`'s, PHPUnit's and test-unit's canaries compiled and run by the real runners), from Debian's packages, the same versions the gym's
# cpp and rust toolchain images install; installs only what is missing, says what it did. Idempotent.
set -euo pipefail
exec "$(dirname "$0")/ensure-debian-packages.sh" "the canary tests of googletest, cargo, PHPUnit and test-unit" \
    "/usr/bin/g++ /usr/bin/cmake /usr/include/gtest/gtest.h /usr/bin/cargo /usr/bin/rustc /usr/bin/phpunit /usr/bin/ruby /usr/share/rubygems-integration/all/gems/test-unit-*/lib/test/unit.rb" \
    g++ cmake libgtest-dev cargo rustc phpunit ruby ruby-test-unit
