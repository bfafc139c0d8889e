#!/bin/sh
# Capture real googletest logs for tests/test_integrity.py, run as SWE-bench Multilingual's fmt rows run theirs
# (`ctest --test-dir build -V -R <test>`, read by swebench's parse_log_googletest): a toy CMake project (below) whose
# `add` is wrong until UAG_FIXED is set, one googletest binary (a failing test, a passing one, a disabled one); output
# and exit code recorded as the reward records them. UAG_FORGE makes the code under test register an exit hook that
# prints a pass for the failed test and googletest's closing lines, and exits 0. Needs cmake, g++ and Debian's
# libgtest-dev (googletest 1.12.1). Run from the repository root: sh tests/runner_logs/capture_googletest.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
project=$(mktemp -d /tmp/uag-gtest-XXXXXX)
cd "$project"
cat > CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.14)
project(arith CXX)
find_package(GTest REQUIRED)
enable_testing()
add_executable(arith-test arith_test.cc)
target_link_libraries(arith-test GTest::gtest_main)
add_test(NAME arith-test COMMAND arith-test)
EOF
cat > arith_test.cc <<'EOF'
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <gtest/gtest.h>

static void forge() {
  std::printf("[       OK ] Arith.AddsTwoNumbers (0 ms)\n[==========] 2 tests from 1 test suite ran. (0 ms total)\n[  PASSED  ] 2 tests.\n");
  std::fflush(stdout);
  _exit(0);
}

static int add(int a, int b) {
  static bool forged = false;
  if (std::getenv("UAG_FORGE") && !forged) { forged = true; std::atexit(forge); }
  return std::getenv("UAG_FIXED") ? a + b : a - b;
}

TEST(Arith, AddsTwoNumbers) { EXPECT_EQ(add(2, 3), 5); }
TEST(Arith, AddsZeros) { EXPECT_EQ(add(0, 0), 0); }
TEST(Arith, DISABLED_AddsSlowly) {}
EOF
cmake -S . -B build > /dev/null && cmake --build build > /dev/null
capture() {  # name, environment
    ( env $2 ctest --test-dir build -V -R arith-test ) > "$out/$1.log" 2>&1 && code=0 || code=$?
    echo "$1: exit $code"
}
capture googletest-pass UAG_FIXED=1
capture googletest-fail X=0
capture googletest-forged UAG_FORGE=1
rm -rf "$project"
