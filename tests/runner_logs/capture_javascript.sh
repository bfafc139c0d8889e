#!/bin/sh
# Capture real logs of jest and vitest for tests/test_integrity.py: a toy package (below) whose `add` is wrong until
# UAG_FIXED is set, two test files per runner (a failing test, a passing one, a skipped one; another file that also
# calls `add`), each runner run with SWE-bench Multilingual's reporter flags (jest --verbose, vitest
# --reporter=verbose); output and exit code recorded as the reward records them. UAG_PRINT makes the code under test
# print a pass for the failing test in both runners' formats whenever it is called; UAG_BROKEN makes it throw as it
# loads (no test file loads). Needs node and the npm registry
# (jest 29.7.0, vitest 1.6.1). Run from the repository root: sh tests/runner_logs/capture_javascript.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
package=$(mktemp -d /tmp/uag-js-XXXXXX)
cd "$package"
npm init -y > /dev/null
npm install --no-audit --no-fund jest@29.7.0 vitest@1.6.1 > /dev/null 2>&1
mkdir -p __tests__ vt
cat > arith.js <<'EOF'
if (process.env.UAG_BROKEN) throw new Error('arith cannot load');
exports.add = (a, b) => {
  if (process.env.UAG_PRINT) process.stdout.write('  ✓ adds two numbers (1 ms)\n ✓ vt/arith.spec.js > add > adds two numbers\n');
  return process.env.UAG_FIXED ? a + b : a - b;
};
EOF
cat > __tests__/arith.test.js <<'EOF'
const { add } = require('../arith');
describe('add', () => {
  test('adds two numbers', () => { expect(add(2, 3)).toBe(5); });
  test('adds zeros', () => { expect(add(0, 0)).toBe(0); });
  test.skip('adds slowly', () => {});
});
EOF
cat > __tests__/other.test.js <<'EOF'
const { add } = require('../arith');
test('adds a number to zero', () => { expect(add(4, 0)).toBe(4); });
EOF
cat > vt/arith.spec.js <<'EOF'
import { describe, test, expect } from 'vitest';
import { add } from '../arith.js';
describe('add', () => {
  test('adds two numbers', () => { expect(add(2, 3)).toBe(5); });
  test('adds zeros', () => { expect(add(0, 0)).toBe(0); });
  test.skip('adds slowly', () => {});
});
EOF
cat > vt/other.spec.js <<'EOF'
import { test, expect } from 'vitest';
import { add } from '../arith.js';
test('adds a number to zero', () => { expect(add(4, 0)).toBe(4); });
EOF
capture() {  # name, environment, command
    name=$1 environment=$2
    shift 2
    ( env $environment "$@" ) > "$out/$name.log" 2>&1 && code=0 || code=$?
    echo "$name: exit $code"
}
for scenario in "pass UAG_FIXED=1" "fail X=0" "prints UAG_PRINT=1" "broken UAG_BROKEN=1"; do
    set -- $scenario
    capture "jest-$1" "$2" npx jest --verbose __tests__
    capture "vitest-$1" "$2" npx vitest run vt --reporter=verbose
done
rm -rf "$package"
