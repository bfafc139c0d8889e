"""What the env needs from a reward: a coroutine that grades the sandbox at the end of an episode.

The env declares this Protocol itself (it does not import `rewards`); `make_env` passes the
SWE-bench reward in. A reward returns a float, or a mapping with a float under "reward" plus any
report, which the env puts in `info["reward_report"]`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from uni_agent_gym.deployments import Deployment


class Reward(Protocol):
    async def __call__(self, deployment: Deployment, instance: dict[str, Any], repo_dir: str) -> float | Mapping[str, Any]: ...


def split_outcome(outcome: float | Mapping[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """(reward, report) from what a Reward returned."""
    if isinstance(outcome, Mapping):
        return float(outcome["reward"]), dict(outcome)
    return float(outcome), None


@dataclass(frozen=True)
class CommandReward:
    """1.0 when `command` exits 0 in the repository (say, the task's own tests), else 0.0."""

    command: str
    timeout: float = 600.0

    async def __call__(self, deployment: Deployment, instance: dict[str, Any], repo_dir: str) -> dict[str, Any]:
        result = await deployment.run(f"cd {shlex.quote(repo_dir)} && {self.command}", timeout=self.timeout)
        return {
            "reward": 1.0 if result.exit_code == 0 else 0.0,
            "resolved": result.exit_code == 0,
            "command": self.command,
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "log": result.output[-4000:],
        }
