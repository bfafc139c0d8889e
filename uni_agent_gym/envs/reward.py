"""What the env needs from a reward: a coroutine that grades the sandbox at the end of an episode.

The env declares this Protocol itself; `make_env` passes the SWE-bench reward in, and `CommandReward`
(`rewards/command.py`, importable from here) grades by one command's exit code. A reward returns a float,
or a mapping with a float under "reward" plus any report, which the env puts in `info["reward_report"]`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from uni_agent_gym.datasets import Task
from uni_agent_gym.deployments import Deployment
from uni_agent_gym.rewards.command import CommandReward

__all__ = ["CommandReward", "Reward", "split_outcome"]


class Reward(Protocol):
    async def __call__(self, deployment: Deployment, instance: Task, repo_dir: str) -> float | Mapping[str, Any]: ...


def split_outcome(outcome: float | Mapping[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """(reward, report) from what a Reward returned."""
    if isinstance(outcome, Mapping):
        return float(outcome["reward"]), dict(outcome)
    return float(outcome), None
