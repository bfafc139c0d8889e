"""The simplest reward: one command's exit code in the repository (the toy task's own tests)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from uni_agent_gym.config import RewardConfig
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.rewards.capture import PatchRejected, capture_in_sandbox
from uni_agent_gym.workspaces.episode import Episode, require_episode


@dataclass(frozen=True)
class CommandReward:
    """1.0 when `command` exits 0 in the repository (say, the task's own tests), else 0.0.

    The report carries the episode's patch (taken as `reward.sandbox: same` takes it), so its predictions
    can be graded again; an episode that changed nothing earns 0 with no run, as SWE-bench grading does."""

    command: str
    timeout: float = 600.0
    max_patch_bytes: int = RewardConfig.model_fields["max_patch_bytes"].default

    async def __call__(self, episode: Episode) -> dict[str, Any]:
        deployment, repo_dir = require_episode(episode, "CommandReward").deployment, episode.repo_dir
        report = {"reward": 0.0, "resolved": False, "command": self.command, "exit_code": None, "timed_out": False, "log": "", "patch": ""}
        try:
            report["patch"] = await self._patch(episode)
        except PatchRejected as exc:
            return {**report, "error": str(exc)}
        except DeploymentError as exc:
            if not await deployment.is_alive():  # the sandbox died: not the agent's doing
                raise
            return {**report, "error": f"no patch can be taken from {repo_dir}: {exc}"}  # the agent broke its repository
        if not report["patch"].strip():
            from uni_agent_gym.rewards.swebench import EMPTY_PATCH

            return {**report, "error": EMPTY_PATCH}
        result = await deployment.run(f"cd {shlex.quote(repo_dir)} && {self.command}", timeout=self.timeout)
        return {
            **report,
            "reward": 1.0 if result.exit_code == 0 else 0.0,
            "resolved": result.exit_code == 0,
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "log": result.output[-4000:],
        }

    async def _patch(self, episode: Episode) -> str:
        """The changes since the commit the episode started from."""
        deployment, repo_dir, start = episode.deployment, episode.repo_dir, episode.start_commit
        if not start:
            head = await deployment.run(f"git -C {shlex.quote(repo_dir)} rev-parse HEAD", timeout=60)
            if head.exit_code != 0:
                raise DeploymentError(f"{repo_dir} is not a git repository: {head.output.strip()[-300:]}")
            start = head.output.strip()
        return await capture_in_sandbox(deployment, repo_dir, start, self.max_patch_bytes)
