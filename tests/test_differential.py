"""The differential check of a resolved patch against gold (`reward.differential`, `rewards/differential.py`), on the
weak toy (`tests/weak_toy.py`, its wrong fixes written before the check): graded on local (python3 alone) through
the reward as an agent's patch and an episode are, nothing faked."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests import weak_toy
from tests.test_deployment_contract import graded_episode
from uni_agent_gym.config import GymConfig, RewardConfig, load_config
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards import differential
from uni_agent_gym.rewards.swebench import SWEBenchReward

EVERY_CENT = "test_split_keeps_every_cent (test_money.TestMoney.test_split_keeps_every_cent)"
TO_CENTS = "test_to_cents (test_money.TestMoney.test_to_cents)"
# The gold's fix of to_cents with WRONG_REMAINDER_TO_FIRST's split: wrong (split(102, 4) is [27, 25, 25, 25]) in a way no
# test of the file tells apart; WRONG_REMAINDER_TO_FIRST alone lacks the to_cents fix, which test_to_cents tells apart
REMAINDER_TO_FIRST_WITH_TO_CENTS = weak_toy.GOLD_PATCH.split("@@ -19,4")[0] + weak_toy.WRONG_REMAINDER_TO_FIRST[weak_toy.WRONG_REMAINDER_TO_FIRST.index("@@"):]


def config(cache_dir, **reward) -> GymConfig:
    return GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(cache_dir), "workspace": "mirror"},
                                     "reward": {"differential": True, **reward}})  # fmt: skip


@pytest.fixture
def gold_gradings(monkeypatch) -> list[str]:
    """The instance ids of every grading of a weak-toy gold patch, counted at the reward's own method."""
    graded, grade_patch = [], SWEBenchReward.grade_patch

    async def counted(self, instance, patch):
        if patch == weak_toy.GOLD_PATCH or patch == instance["patch"]:
            graded.append(instance["instance_id"])
        return await grade_patch(self, instance, patch)

    monkeypatch.setattr(SWEBenchReward, "grade_patch", counted)
    return graded


async def test_a_wrong_fix_the_listed_tests_accept_is_suspect_naming_the_test_of_its_file_that_tells_it_apart(tmp_path, gold_gradings):
    """Every patch earns 1.0 from the weak row's listed tests; the check marks the wrong ones by the tests of the graded
    file that gold passes and they fail, leaves gold and a correct alternative unmarked, and grades gold once."""
    row = await weak_toy.weak_toy_row(str(tmp_path / "cache"))
    reward = SWEBenchReward.from_config(config(tmp_path / "cache"))

    async def graded(patch: str) -> dict:
        result = await reward.grade_patch(row, patch)
        assert (result.status, result.reward) == ("resolved", 1.0), (result.error, result.log[-2000:])  # the check never changes the reward
        return result.to_dict()["differential"]

    alternative = await graded(weak_toy.ALTERNATIVE_FIX)  # the cache is cold: gold is graded here, once
    assert alternative["suspect"] is False and alternative["tests"] == [] and alternative["gold"] == "graded", alternative
    assert alternative["compared"] == 4 and alternative["unlisted"] == 2  # the two listed tests and the two the row does not grade
    special_case = await graded(weak_toy.WRONG_SPECIAL_CASE)
    assert special_case["suspect"] is True and special_case["gold"] == "cached", special_case
    assert special_case["tests"] == [EVERY_CENT, TO_CENTS] and special_case["outcomes"] == {EVERY_CENT: "FAILED", TO_CENTS: "FAILED"}
    assert (await graded(weak_toy.GOLD_PATCH))["suspect"] is False
    # the check's limit: no test of the file tells remainder-to-first from the fix; alone it lacks the to_cents fix, named
    assert (await graded(weak_toy.WRONG_REMAINDER_TO_FIRST))["tests"] == [TO_CENTS]
    assert (await graded(REMAINDER_TO_FIRST_WITH_TO_CENTS))["suspect"] is False
    assert gold_gradings == [row["instance_id"], row["instance_id"]]  # ours (GOLD_PATCH above) and the check's, once

    # another process (a new reward) finds gold's outcomes on disk, keyed by the row and the start commit (no image)
    again = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.WRONG_SPECIAL_CASE)
    assert again.differential["gold"] == "cached" and again.differential["tests"] == [EVERY_CENT, TO_CENTS]
    assert len(gold_gradings) == 2
    stored = json.loads(differential.cache_path(tmp_path / "cache", differential.gold_key(normalise(row), again)).read_text())
    assert again.start_commit and stored["key"].endswith(f"@commit-{again.start_commit}") and stored["statuses"][EVERY_CENT] == "PASSED"


async def test_an_episode_that_writes_a_wrong_fix_earns_one_with_a_suspect_report(tmp_path):
    """The env's reward (an agent's sandbox, its patch captured, graded fresh): the report of the episode says suspect."""
    row = await weak_toy.weak_toy_row(str(tmp_path / "cache"))
    report = await graded_episode(config(tmp_path / "cache"), row, [f"git apply <<'UAG_EOF'\n{weak_toy.WRONG_SPECIAL_CASE}UAG_EOF"])
    assert (report["status"], report["reward"]) == ("resolved", 1.0)
    assert report["differential"]["suspect"] is True and EVERY_CENT in report["differential"]["tests"], report["differential"]
    assert report["differential"]["gold"] == "graded"


async def test_gold_graded_first_fills_the_cache_with_its_own_run(tmp_path, gold_gradings):
    """`validate` grades gold: with the check on, that grading is gold's outcomes, no second one is made."""
    row = await weak_toy.weak_toy_row(str(tmp_path / "cache"))
    result = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.GOLD_PATCH)
    assert result.differential["suspect"] is False and result.differential["gold"] == "this grading" and len(gold_gradings) == 1
    later = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.WRONG_SPECIAL_CASE)
    assert later.differential["gold"] == "cached" and later.differential["suspect"] is True and len(gold_gradings) == 1


async def test_two_gradings_at_once_grade_gold_once(tmp_path, gold_gradings):
    row = await weak_toy.weak_toy_row(str(tmp_path / "cache"))
    reward = SWEBenchReward.from_config(config(tmp_path / "cache"))
    first, second = await asyncio.gather(reward.grade_patch(row, weak_toy.WRONG_SPECIAL_CASE), reward.grade_patch(row, weak_toy.ALTERNATIVE_FIX))
    assert first.differential["suspect"] is True and second.differential["suspect"] is False
    assert sorted([first.differential["gold"], second.differential["gold"]]) == ["cached", "graded"] and len(gold_gradings) == 1


async def test_off_or_unresolved_there_is_no_comparison(tmp_path, gold_gradings):
    row = await weak_toy.weak_toy_row(str(tmp_path / "cache"))
    off = await SWEBenchReward.from_config(config(tmp_path / "cache", differential=False)).grade_patch(row, weak_toy.WRONG_SPECIAL_CASE)
    assert off.resolved and off.differential is None and off.to_dict()["differential"] is None
    unresolved = await SWEBenchReward.from_config(config(tmp_path / "cache")).grade_patch(row, weak_toy.GOLD_PATCH.split("@@ -19,4")[0])
    assert unresolved.status == "unresolved" and unresolved.differential is None
    assert gold_gradings == [] and not (tmp_path / "cache" / differential.DIRECTORY).exists()


async def test_a_gold_that_does_not_resolve_leaves_the_reward_as_graded_and_says_why_once(tmp_path, gold_gradings):
    """A row whose gold fixes only to_cents (it does not resolve its own row): the agent's fix keeps its 1.0, the report
    says there was nothing to compare with, and the next grading reads that from the cache instead of grading gold again."""
    row = {**await weak_toy.weak_toy_row(str(tmp_path / "cache")), "patch": weak_toy.GOLD_PATCH.split("@@ -19,4")[0]}
    reward = SWEBenchReward.from_config(config(tmp_path / "cache"))
    for _ in range(2):
        result = await reward.grade_patch(row, weak_toy.ALTERNATIVE_FIX)
        assert (result.status, result.reward) == ("resolved", 1.0) and result.differential["suspect"] is None
        assert "gold's own grading of uag-tests__weak-toy-1 is unresolved" in result.differential["error"], result.differential
    assert "remembered in" in result.differential["error"] and len(gold_gradings) == 1


def test_the_check_needs_fresh_sandboxes_and_the_gym_config():
    with pytest.raises(ConfigError, match="reward.differential compares a fresh sandbox's run with gold's.*set reward.sandbox: fresh"):
        load_config(overrides=["reward.differential=true", "reward.sandbox=same"])
    with pytest.raises(ValueError, match=r"needs the gym config \(SWEBenchReward.from_config\)"):
        SWEBenchReward(RewardConfig(differential=True))


@pytest.mark.parametrize(
    "agent,gold,suspect",
    [
        ({"a": "PASSED", "b": "PASSED"}, {"a": "PASSED", "b": "PASSED"}, {}),
        ({"a": "PASSED", "b": "ERROR"}, {"a": "PASSED", "b": "PASSED"}, {"b": "ERROR"}),
        ({"a": "PASSED", "b": "SKIPPED"}, {"a": "PASSED", "b": "PASSED"}, {"b": "SKIPPED"}),  # a test the patch skips
        ({"a": "PASSED"}, {"a": "PASSED", "b": "PASSED"}, {"b": "missing"}),  # or makes vanish
        ({"a": "PASSED", "b": "FAILED"}, {"a": "PASSED", "b": "FAILED"}, {}),  # gold fails it too: it says nothing
        ({"a": "PASSED", "c": "FAILED"}, {"a": "PASSED"}, {}),  # a test gold's run does not have
    ],
    ids=["same", "errors", "skipped", "missing", "fails-with-gold", "new-test"],
)
def test_what_counts_as_not_passing_what_gold_passes(agent, gold, suspect):
    assert differential.not_passed(agent, gold) == suspect
