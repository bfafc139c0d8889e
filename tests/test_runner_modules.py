"""Which patches are graded a second time with the runner's modules as at the start commit
(rewards/runner_modules): the measurement behind the docs, on SWE-bench Lite's 300 gold patches and the 19
fixtures. The rerun itself (an attack, and a fix that touches the runner) is in test_reward_attacks.py."""

from __future__ import annotations

import json
from pathlib import Path

from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards.runner_modules import runner_modules_touched

SHARED = Path(__file__).resolve().parents[2] / "shared" / "swebench"


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (SHARED / name).read_text().splitlines()]


def test_no_gold_patch_of_lite_or_the_fixtures_touches_a_runner_module():
    gold = rows("lite.jsonl") + rows("derived.jsonl")
    assert [row["instance_id"] for row in gold if runner_modules_touched(row["repo"], row["patch"])] == []
    # the pytest repository's runner is its code under test: every one of its gold patches edits it (no rerun there)
    pytest_rows = [row for row in gold if row["repo"] == "pytest-dev/pytest"]
    assert len(pytest_rows) == 23 and all(any(path.startswith("src/_pytest/") for path in patch_files(row["patch"])) for row in pytest_rows)


def test_a_patch_to_a_runner_module_is_found_per_repository():
    patch = "diff --git a/django/test/runner.py b/django/test/runner.py\ndiff --git a/django/db/models/query.py b/django/db/models/query.py\n"
    assert runner_modules_touched("django/django", patch) == ["django/test/runner.py"]
    assert runner_modules_touched("sympy/sympy", "diff --git a/sympy/testing/runtests.py b/sympy/testing/runtests.py\n") == ["sympy/testing/runtests.py"]
    assert runner_modules_touched("pallets/flask", patch) == []
