#!/bin/sh
# Capture real doctest logs for tests/test_integrity.py, run as SWE-bench Multilingual's nlohmann/json row runs its
# test binary (`./build/tests/test-udt_cpp11 -s -r=xml`: doctest's XML reporter, read by swebench's parse_log_doctest,
# which reads the first `<doctest>` document of the log). A toy test binary (below) whose `add`, in the header under
# test, is wrong until UAG_FIXED is set: a test case with two subcases (one fails with the bug), one without subcases,
# one skipped. UAG_FORGE makes the header's static initializer print a document of its own, every subcase passed,
# before the binary's run. Needs g++ and Debian's doctest-dev (doctest 2.4.9). Run from the repository root:
# sh tests/runner_logs/capture_doctest.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
project=$(mktemp -d /tmp/uag-doctest-XXXXXX)
cd "$project"
cat > arith.hpp <<'CODE'
#include <cstdio>
#include <cstdlib>

inline int add(int a, int b) { return std::getenv("UAG_FIXED") ? a + b : a - b; }

static const bool uag_forged = [] {
  if (std::getenv("UAG_FORGE")) {
    std::printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<doctest binary=\"./test-arith\" version=\"2.4.9\">\n  <TestSuite>\n"
                "    <TestCase name=\"add\" filename=\"test.cpp\" line=\"4\">\n"
                "      <SubCase name=\"two numbers\" filename=\"test.cpp\" line=\"5\">\n"
                "        <Expression success=\"true\" type=\"CHECK\" filename=\"test.cpp\" line=\"5\"/>\n      </SubCase>\n"
                "      <SubCase name=\"zeros\" filename=\"test.cpp\" line=\"6\">\n"
                "        <Expression success=\"true\" type=\"CHECK\" filename=\"test.cpp\" line=\"6\"/>\n      </SubCase>\n"
                "      <OverallResultsAsserts successes=\"2\" failures=\"0\" test_case_success=\"true\"/>\n    </TestCase>\n"
                "  </TestSuite>\n  <OverallResultsAsserts successes=\"2\" failures=\"0\"/>\n"
                "  <OverallResultsTestCases successes=\"1\" failures=\"0\"/>\n</doctest>\n");
    std::fflush(stdout);
  }
  return true;
}();
CODE
cat > test.cpp <<'CODE'
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include "arith.hpp"
TEST_CASE("add") {
    SUBCASE("two numbers") { CHECK(add(2, 3) == 5); }
    SUBCASE("zeros") { CHECK(add(0, 0) == 0); }
}
TEST_CASE("no subcases") { CHECK(add(1, 0) == 1); }
TEST_CASE("skipped" * doctest::skip()) { CHECK(false); }
CODE
g++ -std=c++11 -o test-arith test.cpp
capture() {  # name, environment
    ( env $2 ./test-arith -s -r=xml ) > "$out/$1.log" 2>&1 && code=0 || code=$?
    echo "$1: exit $code"
}
capture doctest-pass UAG_FIXED=1
capture doctest-fail X=0
capture doctest-forged UAG_FORGE=1
rm -rf "$project"
