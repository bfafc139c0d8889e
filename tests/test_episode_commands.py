"""What grading runs is the episode's: resolved once from what its opening knew (the environments file it was opened
with, its image's record, its start state's test patch), and the reward reads it there."""

from __future__ import annotations

import json

import pytest

from uni_agent_gym import toy
from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import Task
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.rewards.swebench import SWEBenchReward
from uni_agent_gym.specs import Commands, SpecError
from uni_agent_gym.workspaces import episode as episode_module
from uni_agent_gym.workspaces.episode import Episode
from uni_agent_gym.workspaces.recorded_environment import RecordedImage
from tests.graded_toy import graded_toy_row

TASK = Task.from_dict({"family": "swe-bench", "instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "", "test_patch": "",
                  "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": [], "test_command": "own tests", "language": "go",
                  "problem_statement": "p", "version": "1",
                  "build_command": "own build"})  # fmt: skip


def test_the_commands_come_from_the_opening_the_image_the_task_in_that_order():
    assert (Episode(TASK, None, "/r").test_command, Episode(TASK, None, "/r").build_command) == ("own tests", "own build")
    overridden = Episode(TASK, None, "/r", overrides={"test_cmd_as_run": "file tests", "build_cmd": ["a", "b"]})
    assert (overridden.test_command, overridden.build_command) == ("file tests", "a && b")
    recorded = Episode(TASK, None, "/r", image=RecordedImage("env", "sha256:1", Commands("image tests", "image build")))
    assert (recorded.test_command, recorded.build_command) == ("image tests", "image build")
    no_command = Episode(Task.from_dict({**TASK.to_dict(), "test_command": None, "language": "python"}), None, "/r")  # made
    with pytest.raises(SpecError, match="no test command"):
        no_command.test_command  # read


def test_the_commands_are_resolved_once_and_only_when_read(monkeypatch):
    calls = []
    monkeypatch.setattr(episode_module, "command_of_tests", lambda *args, **kwargs: calls.append(args) or "tests")
    episode = Episode(TASK, None, "/r")
    assert calls == [], "opening resolves nothing: a task graded by a reward of its own may have no test command"
    assert [episode.test_command, episode.test_command] == ["tests", "tests"] and len(calls) == 1


def test_a_rewards_own_entry_wins_and_without_one_the_episodes_is_run():
    """The reward's `environments` entry for the task where it has one (what the differential check extends a command
    with), else the one the sandbox was opened with; the episode itself is kept where nothing changes (resolved once)."""
    reward = SWEBenchReward(environments={TASK.instance_id: {"test_cmd_as_run": "reward tests"}})
    assert reward._with_overrides(Episode(TASK, None, "/r")).test_command == "reward tests"
    opened = Episode(TASK, None, "/r", overrides={"test_cmd_as_run": "file tests"})
    assert reward._with_overrides(opened).test_command == "reward tests"
    assert SWEBenchReward()._with_overrides(opened) is opened
    same = SWEBenchReward(environments={TASK.instance_id: {"test_cmd_as_run": "file tests"}})
    assert same._with_overrides(opened) is opened, "the same file (the CLI's, from_config's): the episode's resolution kept"


async def test_a_reward_made_without_the_environments_file_grades_with_the_one_the_sandbox_was_opened_with(tmp_path):
    """The graded toy on local: the environments file (`env.environments`) gives its test command, the env's reward is
    made without it (`AsyncSWEEnv(config, reward=SWEBenchReward())`). Before the episode resolved the commands, the
    reward ran its own (none: the row's command), not the one the file gives."""
    row = await graded_toy_row(str(tmp_path / "cache"))
    command = f"echo from-the-environments-file && {toy.TEST_COMMAND}"
    environments = tmp_path / "environments.json"
    environments.write_text(json.dumps({row["instance_id"]: {"test_cmd_as_run": command}}))
    config = GymConfig.model_validate({"deployment": {"type": "local"},
                                       "env": {"cache_dir": str(tmp_path / "cache"), "environments": str(environments)}})  # fmt: skip
    env = AsyncSWEEnv(config, reward=SWEBenchReward())
    try:
        await env.reset(options={"instance": row})
        assert env.episode.overrides["test_cmd_as_run"] == command
        await env.step({"name": "execute_bash", "arguments": {"command": f"git apply <<'UAG_EOF'\n{toy.GOLD_PATCH}UAG_EOF"}})
        _, reward, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
    finally:
        await env.close()
    report = info["reward_report"]
    assert (terminated, reward, report["status"], report["test_command"]) == (True, 1.0, "resolved", command), report
    assert "from-the-environments-file" in report["log"]
