#!/bin/sh
# Capture real logs of Ruby's test-unit for tests/test_integrity.py, run as SWE-bench Multilingual's fluentd and faker
# rows run theirs (`ruby <test file> -v`, read by swebench's parse_log_ruby_unit): a toy module (below) whose `add` is
# wrong until UAG_FIXED is set, a test case (a failing test, a passing one, an omitted one); output and exit code
# recorded as the reward records them. UAG_FORGE makes the code under test register an exit hook that prints a pass for
# the failed test and exits 0. Needs Debian's ruby and ruby-test-unit (Ruby 3.1, test-unit 3.5). Run from the
# repository root: sh tests/runner_logs/capture_ruby_unit.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
project=$(mktemp -d /tmp/uag-ruby-XXXXXX)
mkdir -p "$project/test"
cat > "$project/arith.rb" <<'EOF'
module Arith
  def self.add(a, b)
    if ENV["UAG_FORGE"] && !$uag_forged
      $uag_forged = true
      at_exit { $stdout.write("\n  test_adds_two_numbers:\t\t\t\t.: (0.000100)\n"); $stdout.flush; exit!(0) }
    end
    ENV["UAG_FIXED"] ? a + b : a - b
  end
end
EOF
cat > "$project/test/test_arith.rb" <<'EOF'
require "test/unit"
require_relative "../arith"

class ArithTest < Test::Unit::TestCase
  def test_adds_two_numbers
    assert_equal(5, Arith.add(2, 3))
  end

  def test_adds_zeros
    assert_equal(0, Arith.add(0, 0))
  end

  def test_adds_slowly
    omit("slow")
  end
end
EOF
cd "$project"
capture() {  # name, environment
    ( env $2 ruby test/test_arith.rb -v ) > "$out/$1.log" 2>&1 && code=0 || code=$?
    echo "$1: exit $code"
}
capture ruby-unit-pass UAG_FIXED=1
capture ruby-unit-fail X=0
capture ruby-unit-forged UAG_FORGE=1
rm -rf "$project"
