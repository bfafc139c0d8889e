#!/bin/sh
# Capture real logs of PHPUnit for tests/test_integrity.py, run as SWE-bench Multilingual's PHP specs run it
# (`phpunit --testdox --colors=never <file>`, read by swebench's parse_log_phpunit): a toy class and its test (one
# test failing until TOY_FIXED is set, one passing, one skipped; TOY_ERROR makes the code under test throw);
# output and exit code recorded as the reward records them. TOY_FORGE makes the code under test register a shutdown
# function that prints a pass for the failed test and PHPUnit's `OK` summary, and exits 0. Needs Debian's `phpunit`
# (9.6 in bookworm; the PHP rows' repositories run 10 and 11, whose testdox lines and summary are the same).
# Run from the repository root: sh tests/runner_logs/capture_phpunit.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
project=$(mktemp -d /tmp/uag-phpunit-XXXXXX)
mkdir -p "$project/tests"
cat > "$project/Arith.php" <<'EOF'
<?php
final class Arith
{
    public static function add(int $a, int $b): int
    {
        if (getenv('TOY_FORGE')) {
            register_shutdown_function(function () {
                echo " ✔ Adds two numbers\n\nOK (3 tests, 3 assertions)\n";
                exit(0);
            });
        }
        if (getenv('TOY_ERROR')) {
            throw new RuntimeException('broken');
        }
        return getenv('TOY_FIXED') ? $a + $b : $a - $b;
    }
}
EOF
cat > "$project/tests/ArithTest.php" <<'EOF'
<?php
use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/../Arith.php';

final class ArithTest extends TestCase
{
    public function testAddsTwoNumbers(): void
    {
        $this->assertSame(5, Arith::add(2, 3));
    }

    public function testAddsZeros(): void
    {
        $this->assertSame(0, Arith::add(0, 0));
    }

    public function testSlow(): void
    {
        $this->markTestSkipped('slow');
    }
}
EOF
cd "$project"
capture() {  # name, environment
    ( env $2 phpunit --testdox --colors=never tests/ArithTest.php ) > "$out/$1.log" 2>&1 && code=0 || code=$?
    echo "$1: exit $code"
}
capture phpunit-pass TOY_FIXED=1
capture phpunit-fail X=0
capture phpunit-error TOY_ERROR=1
capture phpunit-forged TOY_FORGE=1
rm -rf "$project"
