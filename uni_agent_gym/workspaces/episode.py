"""An episode: what a sandbox opened for a task holds, the one object every layer after the opening reads.

    episode = await open_task(task, config)        # workspaces/start_state.py
    episode.deployment, episode.repo_dir           # the sandbox, and where the repository is in it
    episode.start_commit                           # what the agent's patch is taken against
    episode.test_patch                             # the hidden tests grading applies
    episode.environment, episode.image_id          # what its image records of itself (None: not built here)
    episode.commands                               # the commands grading takes from that image (None: the task's)
    episode.test_command, episode.build_command    # what grading runs here, resolved once from all of the above
    reward(episode)                                # the env's `Reward`; tools get `episode.deployment`

The task (`datasets.Task`) is the dataset's row, made once where rows come in and never changed: what the run has
(the sandbox, the commit it started from, a test patch its start state made, the image and what that image records)
is the episode's. A grading sandbox is an episode too, opened from the same task (`rewards/swebench.py`).

What grading runs (the test command with the test patch's files, the build after the patches) is resolved once per
episode, from what its opening knew: the task's entry in the environments file it was opened with, the commands its
image records, the test patch its start state made. Resolved on first read, not at the opening: a task graded by a
reward of its own may have no test command at all, and opens as it always did.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from uni_agent_gym.datasets import Task
from uni_agent_gym.deployments import Deployment
from uni_agent_gym.specs import Commands, build_of_tests, command_of_tests
from uni_agent_gym.workspaces.recorded_environment import RecordedImage


@dataclass(frozen=True)
class Episode:
    """A started sandbox of a task at its start state, and what the run knows of it (the module docstring)."""

    task: Task
    deployment: Deployment
    repo_dir: str
    start_commit: str | None = None  # the commit the episode started from (None: not read; grading reads HEAD)
    made_test_patch: str | None = None  # the hidden tests its start state took out (SWE-smith), to apply when grading
    image: RecordedImage | None = None  # None: an image not built here (pulled, modal's), or no image (local, a mirror)
    # its task's entry in the environments file it was opened with (None: none); a reward given an entry of its own grades with that
    overrides: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def test_patch(self) -> str:
        """The test patch grading applies: the one the start state made, else the task's."""
        return self.made_test_patch if self.made_test_patch is not None else self.task.test_patch

    @property
    def environment(self) -> str | None:
        """The environment digest its image records (None: an image not built here)."""
        return self.image.environment if self.image is not None else None

    @property
    def image_id(self) -> str | None:
        return self.image.image_id if self.image is not None else None

    @property
    def commands(self) -> Commands | None:
        """The commands its image records for a task that leaves them to the defaults (None: the task's own, or its spec's)."""
        return self.image.commands if self.image is not None else None

    @cached_property
    def test_command(self) -> str:
        """The test command grading runs in this sandbox (`specs.command_of_tests`), resolved once; a `SpecError` where
        the task has none."""
        return command_of_tests(self.task, self._environments, recorded=self.commands, test_patch=self.test_patch)

    @cached_property
    def build_command(self) -> str:
        """What grading builds after the patches and before the tests ("": nothing), resolved once."""
        return build_of_tests(self.task, self._environments, recorded=self.commands)

    @property
    def _environments(self) -> dict[str, dict[str, Any]]:
        return {self.task.instance_id: dict(self.overrides)} if self.overrides else {}

    def __repr__(self) -> str:
        return f"Episode({self.task.instance_id!r}, repo_dir={self.repo_dir!r}, start_commit={self.start_commit!r})"


async def head_commit(deployment: Deployment, repo_dir: str) -> str | None:
    """The commit checked out in the sandbox's repository, None where git cannot say."""
    head = await deployment.run(f"git -C {shlex.quote(repo_dir)} rev-parse HEAD", timeout=60)
    return head.output.strip() if head.exit_code == 0 else None


def require_episode(value: object, where: str) -> Episode:
    """`value` if it is an `Episode`, else a TypeError naming the fix (a reward of the gym's takes the episode the env
    opened, no longer a sandbox, a task and a directory)."""
    if not isinstance(value, Episode):
        raise TypeError(f"{where} takes an Episode (what workspaces.start_state.open_task returns), actual value: a "
                        f"{type(value).__name__}")  # fmt: skip
    return value
