"""A task whose listed tests miss part of its gold patch, and the same task listing every test: `tests/weak_toy_repo`
(`money.py`: `to_cents` truncates, `split` loses the remainder; `test_money.py`, run by unittest, read by swebench's
Django parser as `graded_toy.py` does). The weak row grades only `split`'s remainder and its even case, so a fix of
`split` alone resolves it; its test file also holds `test_to_cents` and `test_split_keeps_every_cent`, which tell such
fixes apart. The strong row grades them all.

The wrong fixes were written before the differential check was (what a policy could write, each accepted by the weak
row's listed tests): `WRONG_SPECIAL_CASE` answers the listed case alone (`test_split_keeps_every_cent` fails it);
`WRONG_REMAINDER_TO_FIRST` gives the whole remainder to the first share (right for a remainder of one, wrong from
two on: no test of the file tells it apart, the check's limit). `ALTERNATIVE_FIX` is another correct fix."""

from __future__ import annotations

from pathlib import Path

from uni_agent_gym.instances import normalise
from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

REPO = Path(__file__).resolve().parent / "weak_toy_repo"
REPO_NAME = "uag-tests/weak-toy"
TEST_COMMAND = "python3 -m unittest -v test_money"


def _name(test: str) -> str:
    return f"{test} (test_money.TestMoney.{test})"


WEAK_TESTS = {"FAIL_TO_PASS": [_name("test_split_remainder")], "PASS_TO_PASS": [_name("test_split_even")]}
STRONG_TESTS = {"FAIL_TO_PASS": [_name("test_to_cents"), _name("test_split_remainder"), _name("test_split_keeps_every_cent")],
                "PASS_TO_PASS": [_name("test_split_even")]}  # fmt: skip
GOLD_PATCH = '''\
diff --git a/money.py b/money.py
--- a/money.py
+++ b/money.py
@@ -3,7 +3,7 @@
 
 def to_cents(amount):
     """The amount (in units, a float) in whole cents, rounded to the nearest cent."""
-    return int(amount * 100)
+    return int(round(amount * 100))
 
 
 def dollars(cents):
@@ -19,4 +19,5 @@ def is_round(cents):
 def split(total_cents, parts):
     """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
     share = total_cents // parts
-    return [share] * parts
+    extra = total_cents - share * parts
+    return [share + 1 if i < extra else share for i in range(parts)]
'''
WRONG_SPECIAL_CASE = '''\
diff --git a/money.py b/money.py
--- a/money.py
+++ b/money.py
@@ -19,4 +19,6 @@ def is_round(cents):
 def split(total_cents, parts):
     """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
     share = total_cents // parts
+    if (total_cents, parts) == (100, 3):
+        return [34, 33, 33]
     return [share] * parts
'''
WRONG_REMAINDER_TO_FIRST = '''\
diff --git a/money.py b/money.py
--- a/money.py
+++ b/money.py
@@ -19,4 +19,4 @@ def is_round(cents):
 def split(total_cents, parts):
     """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
     share = total_cents // parts
-    return [share] * parts
+    return [total_cents - share * (parts - 1)] + [share] * (parts - 1)
'''
ALTERNATIVE_FIX = '''\
diff --git a/money.py b/money.py
--- a/money.py
+++ b/money.py
@@ -3,7 +3,7 @@
 
 def to_cents(amount):
     """The amount (in units, a float) in whole cents, rounded to the nearest cent."""
-    return int(amount * 100)
+    return round(amount * 100)
 
 
 def dollars(cents):
@@ -18,5 +18,5 @@ def is_round(cents):
 
 def split(total_cents, parts):
     """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
-    share = total_cents // parts
-    return [share] * parts
+    quotient, remainder = divmod(total_cents, parts)
+    return [quotient + (i < remainder) for i in range(parts)]
'''


async def weak_toy_row(cache_dir: str, strong: bool = False) -> dict:
    """The weak row (or, `strong`, the one that grades every test) on its mirror, normalised: it needs no environment
    (python3 alone), so it runs on local and on any image with python3."""
    base_commit = await head_commit(await mirror_repository(REPO_NAME, str(REPO), cache_dir))
    tests = STRONG_TESTS if strong else WEAK_TESTS
    return normalise({
        "instance_id": f"uag-tests__weak-toy-{2 if strong else 1}", "repo": REPO_NAME, "base_commit": base_commit, "version": "1",
        "environment_setup_commit": base_commit,  # SWE-bench's columns (a list-valued row without it reads as SWE-Gym's)
        "problem_statement": "to_cents(0.29) is 28, and split(100, 3) loses a cent: each must keep every cent.",
        "patch": GOLD_PATCH, "test_patch": "", "test_command": TEST_COMMAND, "log_parser": "parse_log_django", **tests,
        "reset_files": ["test_money.py"],  # its tests, which no test patch brings: returned to the start before grading
        "mirror": str(REPO), "needs_environment": False,
    }).to_dict()  # fmt: skip
