"""A task in C that the full reward grades, build step included: `tests/c_toy_repo/` (a bug in `add`), built with
`make` when grading, its tests printed the way redis's runtest prints them, read by swebench's `parse_log_redis`.
It needs only a C compiler and make (the host's; the base images have build-essential), so it runs on every
deployment, where the real C fixtures (`language_fixtures.py`) need their toolchain images."""

from __future__ import annotations

from pathlib import Path

from uni_agent_gym.instances import normalise
from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

REPO = Path(__file__).resolve().parent / "c_toy_repo"
REPO_NAME = "uag-tests/c-toy"

GOLD_PATCH = """\
diff --git a/arith.c b/arith.c
--- a/arith.c
+++ b/arith.c
@@ -2,5 +2,5 @@
 
 /* The sum of a and b. */
 int add(int a, int b) {
-    return a - b;
+    return a + b;
 }
"""
DOES_NOT_COMPILE = GOLD_PATCH.replace("+    return a + b;", "+    return a + b")
# The bug left in place, and the build prints every test as passed: the build's output is not the graded log.
PASSES_PRINTED_BY_THE_BUILD = """\
diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,2 +1,3 @@
 tests/check: tests/check.c arith.c arith.h
 	$(CC) -Wall -I. -o tests/check tests/check.c arith.c
+	@printf '[ok]: add of two numbers\\n[ok]: add of a negative number\\n[ok]: add of zeros\\n'
"""


async def c_toy_row(cache_dir: str) -> dict:
    """The C toy as a normalised row: its mirror is its directory, it needs no environment (the compiler is the
    image's or the host's)."""
    base_commit = await head_commit(await mirror_repository(REPO_NAME, str(REPO), cache_dir))
    return normalise({
        "instance_id": "uag-tests__c-toy-1", "repo": REPO_NAME, "base_commit": base_commit, "version": "1",
        "problem_statement": "add(2, 3) returns -1: add() must return the sum of its arguments.",
        "patch": GOLD_PATCH, "test_patch": "", "language": "c", "family": "swe-bench",
        "build_command": "make", "test_command": "./tests/check", "log_parser": "parse_log_redis",
        "FAIL_TO_PASS": ["add of two numbers", "add of a negative number"], "PASS_TO_PASS": ["add of zeros"],
        "mirror": str(REPO), "needs_environment": False,
    })  # fmt: skip


# The C toy as a SWE-bench 5.x row writes it (`swebench.harness.utils.make_test_spec`'s columns): its build and tests in
# its own eval script, its parser and grading rule named, its image named; no build or test command of the gym's, and
# a repository swebench 4.1's specs never listed.
TEST_PATCH = """\
diff --git a/tests/check.c b/tests/check.c
--- a/tests/check.c
+++ b/tests/check.c
@@ -16,6 +16,7 @@ int main(void) {
     expect("add of two numbers", add(2, 3) == 5);
     expect("add of a negative number", add(-4, 1) == -3);
     expect("add of zeros", add(0, 0) == 0);
+    expect("add of large numbers", add(1000, 2000) == 3000);
     printf("\\n                   The End\\n\\n");
     if (failures) {
         printf("!!! WARNING The following tests failed:\\n\\n");
"""
EVAL_SCRIPT = """\
#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
export CFLAGS=-O0
git checkout {base_commit} tests/check.c
git apply --verbose --reject - <<'EOF_114329324912'
{test_patch}
EOF_114329324912
make
: '>>>>> Start Test Output'
./tests/check
: '>>>>> End Test Output'
git checkout {base_commit} tests/check.c
"""


def swebench_5_row(base_commit: str, image: str, eval_type: str = "pass_and_fail") -> dict:
    """The C toy's row in swebench 5.x's form (`image`, `log_parser`, `eval_type`, `eval_script`)."""
    return {
        "instance_id": "uag-tests__c-toy-5", "repo": REPO_NAME, "base_commit": base_commit, "version": "1",
        "problem_statement": "add(2, 3) returns -1: add() must return the sum of its arguments.", "patch": GOLD_PATCH,
        "test_patch": TEST_PATCH, "FAIL_TO_PASS": ["add of two numbers", "add of a negative number", "add of large numbers"],
        "PASS_TO_PASS": ["add of zeros"], "image": image, "log_parser": "parse_log_redis", "eval_type": eval_type,
        "eval_script": EVAL_SCRIPT.format(base_commit=base_commit, test_patch=TEST_PATCH.rstrip("\n")),
    }  # fmt: skip
