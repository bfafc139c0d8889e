"""The built-in toy task: a tiny repository with a real bug, a failing test and a known fix.

It runs anywhere with nothing downloaded (Python's own unittest), so `make demo` and
`check_env` have an episode to play on a fresh machine. The row has the SWE-bench shape; its
repository is the plain directory `repo/` beside this file, used as the mirror.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from uni_agent_gym.rewards.command import CommandReward
from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

REPO = Path(__file__).parent / "repo"
INSTANCE_ID = "uni-agent-gym__toy-1"
REPO_NAME = "uni-agent-gym/toy"  # rows of this repo are graded by the toy's own tests
TEST_COMMAND = "python3 -m unittest -v test_stats"
REWARD = CommandReward(TEST_COMMAND, timeout=120)

PROBLEM_STATEMENT = """\
`stats.mean` returns wrong results

`mean([1, 2, 3])` returns `3.0` instead of `2.0`, and `mean([5])` raises `ZeroDivisionError`
instead of returning `5.0`. The mean of a non-empty sequence should be its sum divided by its length.
Run the tests with `python3 -m unittest -v test_stats`.
"""

GOLD_PATCH = """\
diff --git a/stats.py b/stats.py
--- a/stats.py
+++ b/stats.py
@@ -5,7 +5,7 @@ def mean(values):
     \"\"\"The arithmetic mean of a non-empty sequence of numbers.\"\"\"
     if not values:
         raise ValueError("mean() needs at least one value")
-    return sum(values) / (len(values) - 1)
+    return sum(values) / len(values)
 
 
 def clamp(value, low, high):
"""


async def toy_instance(cache_dir: str) -> dict[str, Any]:
    """The toy task as a SWE-bench-shaped row; `base_commit` is what committing `repo/` gives."""
    base_commit = await head_commit(await mirror_repository(REPO_NAME, str(REPO), cache_dir))
    return {
        "instance_id": INSTANCE_ID,
        "repo": REPO_NAME,
        "base_commit": base_commit,
        "problem_statement": PROBLEM_STATEMENT,
        "version": "0.1",
        "patch": GOLD_PATCH,
        "test_patch": "",
        "FAIL_TO_PASS": ["test_stats.MeanTest.test_mean_of_three", "test_stats.MeanTest.test_mean_of_one"],
        "PASS_TO_PASS": ["test_stats.MeanTest.test_empty_is_an_error", "test_stats.ClampTest.test_clamp"],
        "mirror": str(REPO),
        "needs_environment": False,  # stdlib only: no venv, and any image with python3 runs it
        "family": "swe-bench",  # SWE-bench's shape (the env grades it with its own tests)
    }


def scripted_solution(repo_dir: str) -> list[dict[str, Any]]:
    """What a competent agent does on the toy task: explore, reproduce, fix with the editor, check, finish."""
    return [
        {"name": "str_replace_editor", "arguments": {"command": "view", "path": repo_dir}},
        {"name": "search", "arguments": {"search_term": "def mean", "path": repo_dir}},
        {"name": "str_replace_editor", "arguments": {"command": "view", "path": f"{repo_dir}/stats.py", "view_range": [4, 9]}},
        {"name": "execute_bash", "arguments": {"command": "python3 -c 'from stats import mean; print(mean([1, 2, 3]))'"}},
        {"name": "str_replace_editor", "arguments": {
            "command": "str_replace", "path": f"{repo_dir}/stats.py",
            "old_str": "return sum(values) / (len(values) - 1)", "new_str": "return sum(values) / len(values)"}},
        {"name": "execute_bash", "arguments": {"command": f"{TEST_COMMAND} 2>&1 | tail -n 3"}},
        {"name": "finish", "arguments": {"message": "mean() divides by len(values) now."}},
    ]  # fmt: skip
