"""The simplest reward: one command's exit code in the repository (the toy task's own tests)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from uni_agent_gym.deployments import Deployment


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
