"""The built-in toy task: a tiny repository with a real bug, a failing test and a known fix.

It runs anywhere with nothing downloaded (Python's own unittest), so `make demo` and
`check_env` have an episode to play on a fresh machine. The row has the SWE-bench shape; its
repository is the plain directory `repo/` beside this file, used as the mirror. It is also the
dataset `toy` (`dataset_rows`) of `eval`, `grade` and `datasets`, graded by its own tests there too.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uni_agent_gym.config import EnvConfig, GymConfig
from uni_agent_gym.datasets import Task
from uni_agent_gym.deployments.pool import release
from uni_agent_gym.instances import read_rows
from uni_agent_gym.rewards.command import CommandReward
from uni_agent_gym.rewards.patches import apply_patch
from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository
from uni_agent_gym.workspaces.start_state import open_task

if TYPE_CHECKING:
    from uni_agent_gym.rewards.swebench import RewardResult

REPO = Path(__file__).parent / "repo"
INSTANCE_ID = "uni-agent-gym__toy-1"
REPO_NAME = "uni-agent-gym/toy"  # rows of this repo are graded by the toy's own tests
TEST_COMMAND = "python3 -m unittest -v test_stats"
REWARD = CommandReward(TEST_COMMAND, timeout=120)
DATASET = "toy"  # the dataset name that `eval`, `grade` and `datasets` take for the toy's rows

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


def dataset_rows(source: str, split: str = "test", cache_dir: str | None = None) -> list[dict[str, Any]]:
    """The raw rows `--dataset` names: the toy's for `toy` (nothing downloaded), else `instances.read_rows`'s."""
    if str(source) != DATASET:
        return read_rows(source, split=split)
    return [asyncio.run(toy_instance(cache_dir or EnvConfig.model_fields["cache_dir"].default))]


def is_toy(instance: Task) -> bool:
    """Whether a task is the toy's, graded by its own tests (SWE-bench's specs have no test command for it)."""
    return instance.repo == REPO_NAME


async def grade_patch(instance: Task, patch: str, gym: GymConfig) -> RewardResult:
    """A prediction for the toy graded as its episodes are (`REWARD`), in a fresh sandbox where only the
    patch is applied, the official harness's way (what `SWEBenchReward.grade_patch` does for other tasks)."""
    from uni_agent_gym.rewards.swebench import RewardResult

    started = time.monotonic()
    episode = await open_task(instance, gym, grading=True)
    try:
        applied, log = await apply_patch(episode.deployment, episode.repo_dir, patch, "patch")
        report = await REWARD(episode) if applied else {"resolved": False, "reward": 0.0, "error": log[-4000:]}
    finally:
        await release(episode.deployment)
    status = "patch_failed" if not applied else "timeout" if report["timed_out"] else "resolved" if report["resolved"] else "unresolved"
    return RewardResult(
        instance.instance_id, status, reward=report["reward"], resolved=report["resolved"], patch=patch, test_command=TEST_COMMAND,
        exit_code=report.get("exit_code"), log=report.get("log", ""), error=report.get("error"), durations={"total": time.monotonic() - started},
    )  # fmt: skip


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
