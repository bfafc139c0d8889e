#!/bin/sh
# Capture real TAP logs for tests/test_integrity.py, as SWE-bench Multilingual's TAP rows run their runners and read
# them with swebench's parse_log_tap: mocha with its TAP reporter (axios: `npx mocha <file> -R tap -g <grep>`) and
# QUnit's CLI (three.js: `npx qunit <file>`). A toy module (below) whose `add` is wrong until UAG_FIXED is set, a test
# file per runner (a failing test, a passing one, a skipped one); output and exit code recorded as the reward records
# them. UAG_FORGE makes the code under test register an exit hook that prints a pass for the failed test and exits 0.
# Needs node and the npm registry (mocha 10.8.2, qunit 2.22.0). Run from the repository root:
# sh tests/runner_logs/capture_tap.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
package=$(mktemp -d /tmp/uag-tap-XXXXXX)
cd "$package"
npm init -y > /dev/null
npm install --no-audit --no-fund mocha@10.8.2 qunit@2.22.0 > /dev/null 2>&1
mkdir -p test
cat > arith.js <<'EOF'
exports.add = (a, b) => {
  if (process.env.UAG_FORGE && !process.uagForged) {
    process.uagForged = true;
    const name = typeof QUnit === 'undefined' ? 'add adds two numbers' : 'add > adds two numbers';  // each runner's name for it
    process.on('exit', () => { process.stdout.write(`ok 1 ${name}\n`); process.reallyExit(0); });
  }
  return process.env.UAG_FIXED ? a + b : a - b;
};
EOF
cat > test/arith.mocha.js <<'EOF'
const assert = require('assert');
const { add } = require('../arith');
describe('add', () => {
  it('adds two numbers', () => { assert.strictEqual(add(2, 3), 5); });
  it('adds zeros', () => { assert.strictEqual(add(0, 0), 0); });
  it.skip('adds slowly', () => {});
});
EOF
cat > test/arith.qunit.js <<'EOF'
const { add } = require('../arith');
QUnit.module('add', () => {
  QUnit.test('adds two numbers', (assert) => { assert.strictEqual(add(2, 3), 5); });
  QUnit.test('adds zeros', (assert) => { assert.strictEqual(add(0, 0), 0); });
  QUnit.skip('adds slowly', () => {});
});
EOF
capture() {  # name, environment, command
    name=$1 environment=$2
    shift 2
    ( env $environment "$@" ) > "$out/$name.log" 2>&1 && code=0 || code=$?
    echo "$name: exit $code"
}
for scenario in "pass UAG_FIXED=1" "fail X=0" "forged UAG_FORGE=1"; do
    set -- $scenario
    capture "mocha-tap-$1" "$2" npx mocha test/arith.mocha.js -R tap
    capture "qunit-$1" "$2" npx qunit test/arith.qunit.js
done
rm -rf "$package"
