#!/bin/sh
# Capture real logs of automake's test harness for tests/test_integrity.py, run as SWE-bench Multilingual's jq rows
# run theirs (`make check`, read by swebench's parse_log_jq): a toy autotools project (below) with three test scripts
# (one failing until UAG_FIXED is set, one passing, one skipped: exit 77); output and exit code recorded as the reward
# records them. The harness writes each test's output to that test's own .log, not to the console: UAG_FORGE makes the
# failing test script write a `PASS:` line and a summary to its driver's output instead (`/proc/$PPID/fd/1`: make's,
# the console), then fail. Needs autoconf, automake and make. Run from the repository root:
# sh tests/runner_logs/capture_automake.sh
set -eu
out=$(cd "$(dirname "$0")" && pwd)
project=$(mktemp -d /tmp/uag-automake-XXXXXX)
cd "$project"
mkdir -p tests
cat > configure.ac <<'EOF'
AC_INIT([arith], [1.0])
AM_INIT_AUTOMAKE([foreign])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
EOF
cat > Makefile.am <<'EOF'
TESTS = tests/adds.test tests/zeros.test tests/slowly.test
EOF
cat > tests/adds.test <<'EOF'
#!/bin/sh
if [ -n "${UAG_FORGE:-}" ]; then
    printf 'PASS: tests/adds.test\n# TOTAL: 3\n# PASS:  2\n# SKIP:  1\n# FAIL:  0\n' > /proc/$PPID/fd/1
fi
[ -n "${UAG_FIXED:-}" ]
EOF
printf '#!/bin/sh\nexit 0\n' > tests/zeros.test
printf '#!/bin/sh\nexit 77\n' > tests/slowly.test
chmod +x tests/*.test
autoreconf -i > /dev/null 2>&1 && ./configure > /dev/null
capture() {  # name, environment
    ( env $2 make check ) > "$out/$1.log" 2>&1 && code=0 || code=$?
    echo "$1: exit $code"
}
capture automake-pass UAG_FIXED=1
capture automake-fail X=0
capture automake-forged UAG_FORGE=1
rm -rf "$project"
