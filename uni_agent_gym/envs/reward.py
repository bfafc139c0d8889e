"""What the env needs from a reward: a coroutine that grades the episode when it ends.

The env declares this Protocol itself; `make_env` passes the SWE-bench reward in, and `CommandReward`
(`rewards/command.py`, importable from here) grades by one command's exit code. A reward is handed the `Episode`
(`workspaces/episode.py`: `episode.deployment`, `episode.task`, `episode.repo_dir`, `episode.start_commit`, ...)
and returns a float, or a mapping with a float under "reward" plus any report, which the env puts in
`info["reward_report"]`.

A reward written for the earlier protocol, `reward(deployment, instance, repo_dir)`, is still called so for one
release, warning `DeprecationWarning` (`grade`): take the episode instead.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from typing import Any, Protocol

from uni_agent_gym.rewards.command import CommandReward
from uni_agent_gym.workspaces.episode import Episode

__all__ = ["CommandReward", "Reward", "grade", "split_outcome"]
OLD_PROTOCOL = ("a reward called as reward(deployment, instance, repo_dir) is deprecated and goes in the next release: "
                "take the episode, reward(episode), and read episode.deployment, episode.task, episode.repo_dir")  # fmt: skip


class Reward(Protocol):
    async def __call__(self, episode: Episode) -> float | Mapping[str, Any]: ...


async def grade(reward: Reward, episode: Episode) -> float | Mapping[str, Any]:
    """What `reward` returns for the episode (a reward of the earlier protocol: called with its three arguments, warning
    `OLD_PROTOCOL`)."""
    if _takes_three(reward):
        warnings.warn(OLD_PROTOCOL, DeprecationWarning, stacklevel=2)
        return await reward(episode.deployment, episode.task, episode.repo_dir)  # type: ignore[call-arg]
    return await reward(episode)


def _takes_three(reward: Any) -> bool:
    """Whether a reward needs three positional arguments (the earlier protocol's deployment, instance, repo_dir)."""
    try:
        parameters = inspect.signature(reward).parameters.values()
    except (TypeError, ValueError):  # no signature to read: called the current way
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(parameter.kind in positional and parameter.default is inspect.Parameter.empty for parameter in parameters) >= 3


def split_outcome(outcome: float | Mapping[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """(reward, report) from what a Reward returned."""
    if isinstance(outcome, Mapping):
        return float(outcome["reward"]), dict(outcome)
    return float(outcome), None
