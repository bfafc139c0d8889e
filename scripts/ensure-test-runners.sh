#!/usr/bin/env bash
# The C++, Rust, PHP and Ruby test runners the canary tests run on this machine (tests/test_canaries.py: googletest's,
# `cargo test`'s, PHPUnit's, test-unit's and RSpec's canaries compiled and run by the real runners; jq reshapes RSpec's JSON), from Debian's packages, the same versions the gym's
# cpp and rust toolchain images install; installs only what is missing, says what it did. Idempotent.
set -euo pipefail
exec "$(dirname "$0")/ensure-debian-packages.sh" "the canary tests of googletest, cargo, PHPUnit, test-unit and RSpec" \
    "/usr/bin/g++ /usr/bin/cmake /usr/include/gtest/gtest.h /usr/bin/cargo /usr/bin/rustc /usr/bin/phpunit /usr/bin/ruby /usr/share/rubygems-integration/all/gems/test-unit-*/lib/test/unit.rb /usr/bin/rspec /usr/bin/jq" \
    g++ cmake libgtest-dev cargo rustc phpunit ruby ruby-test-unit ruby-rspec jq
