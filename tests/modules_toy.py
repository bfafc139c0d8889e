"""A task whose graded test file lists every test it holds, and whose other test file tells a wrong fix apart:
`tests/modules_toy_repo` (`shop/money.py`: `split` loses the remainder; `tests/test_money.py`, the graded file, run
by unittest and read by swebench's Django parser; `tests/test_receipt.py` imports `shop.money` and checks that the shares
add up; `tests/test_labels.py` tests another module). The differential check's first comparison (the graded file in
full) has nothing unlisted to compare here; its second run (the test files of the modules gold changes) has
`test_receipt`, which `WRONG_SPECIAL_CASE` fails."""

from __future__ import annotations

from pathlib import Path

from uni_agent_gym.instances import normalise
from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

REPO = Path(__file__).resolve().parent / "modules_toy_repo"
REPO_NAME = "uag-tests/modules-toy"
TEST_COMMAND = "python3 -m unittest -v tests.test_money"
RECEIPT = "test_shares_add_up_to_the_total (tests.test_receipt.TestReceipt.test_shares_add_up_to_the_total)"
GOLD_PATCH = '''\
diff --git a/shop/money.py b/shop/money.py
--- a/shop/money.py
+++ b/shop/money.py
@@ -4,4 +4,5 @@
 def split(total_cents, parts):
     """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
     share = total_cents // parts
-    return [share] * parts
+    extra = total_cents - share * parts
+    return [share + 1 if i < extra else share for i in range(parts)]
'''
WRONG_SPECIAL_CASE = '''\
diff --git a/shop/money.py b/shop/money.py
--- a/shop/money.py
+++ b/shop/money.py
@@ -4,4 +4,6 @@
 def split(total_cents, parts):
     """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
     share = total_cents // parts
+    if (total_cents, parts) == (100, 3):
+        return [34, 33, 33]
     return [share] * parts
'''
ALTERNATIVE_FIX = '''\
diff --git a/shop/money.py b/shop/money.py
--- a/shop/money.py
+++ b/shop/money.py
@@ -3,5 +3,5 @@
 
 def split(total_cents, parts):
     """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
-    share = total_cents // parts
-    return [share] * parts
+    quotient, remainder = divmod(total_cents, parts)
+    return [quotient + (i < remainder) for i in range(parts)]
'''


def _name(test: str) -> str:
    return f"{test} (tests.test_money.TestMoney.{test})"


async def modules_toy_row(cache_dir: str) -> dict:
    """The row on its mirror, normalised (python3 alone: local, or any image with python3)."""
    base_commit = await head_commit(await mirror_repository(REPO_NAME, str(REPO), cache_dir))
    return normalise({
        "instance_id": "uag-tests__modules-toy-1", "repo": REPO_NAME, "base_commit": base_commit, "version": "1",
        "environment_setup_commit": base_commit, "problem_statement": "split(100, 3) loses a cent: the shares must add up.",
        "patch": GOLD_PATCH, "test_patch": "", "test_command": TEST_COMMAND, "log_parser": "parse_log_django",
        "FAIL_TO_PASS": [_name("test_split_remainder")], "PASS_TO_PASS": [_name("test_split_even")],
        "mirror": str(REPO), "needs_environment": False,
    }).to_dict()  # fmt: skip
