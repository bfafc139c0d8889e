"""A task's sandbox at its start state: the workspace (`open.py`) plus, for tasks that start from
a state made out of `base_commit` (SWE-smith: the bug applied, its FAIL_TO_PASS test files removed),
that state made in the sandbox before anyone else touches it.

The made state is one root commit with a fixed identity and date, so every sandbox of the task (the
agent's and the fresh one grading it) starts at the same commit, and it keeps no history: the parent
would be the unbroken code. The removed files are the hidden tests: their diff (adding them back) is
taken before they go and kept in the sandbox's `Episode` (`test_patch`), on the host, applied when
grading; the task is not changed. Such sandboxes do not come from the warm pool: the pool returns a container to the state it
was first handed out in, which is before this one.
"""

from __future__ import annotations

import dataclasses
import secrets
import shlex

from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import Task, require_task
from uni_agent_gym.deployments import Deployment
from uni_agent_gym.deployments.pool import release
from uni_agent_gym.deployments.sites import site_of
from uni_agent_gym.specs import load_environments
from uni_agent_gym.workspaces.episode import Episode, head_commit
from uni_agent_gym.workspaces.host_git import FIXED_IDENTITY, WorkspaceError
from uni_agent_gym.workspaces.open import open_workspace

START_MESSAGE = "uni-agent-gym start"


async def open_task(instance: Task, config: GymConfig, *, grading: bool = False) -> Episode:
    """The episode of a started sandbox of the task at its start state: the sandbox, its repository directory, the
    commit it starts at, what its image records, the test patch where the start state made it, and the task's entry in
    the environments file (`env.environments`), from which with the rest it resolves what grading runs. `grading` opens
    the sandbox that grades (the image with the hidden tests, where a family hides them from the agent). A dataset
    row is not a task: `normalise(row)` first."""
    instance = require_task(instance, "open_task")
    if instance.start_patch and site_of(config.deployment).pool_size:
        config = config.model_copy(update={"deployment": config.deployment.model_copy(update={"pool_size": 0})})
    episode = await open_workspace(instance, config, grading=grading)
    try:
        made = await make_start_state(episode.deployment, episode.repo_dir, instance)
        start = made[0] if made else await head_commit(episode.deployment, episode.repo_dir)
        overrides = load_environments(config.env.environments).get(instance.instance_id)
        return dataclasses.replace(episode, start_commit=start, made_test_patch=made[1] if made else None, overrides=overrides)
    except BaseException:
        await release(episode.deployment)
        raise


async def make_start_state(deployment: Deployment, repo_dir: str, instance: Task) -> tuple[str, str] | None:
    """Make the task's start state in the sandbox (see the module docstring): (the start commit, the test patch of
    the hidden tests); None when it has no `start_patch`."""
    if not instance.start_patch:
        return None
    scratch = f"/tmp/uni-agent-gym-start-{secrets.token_hex(6)}"
    await deployment.write_file(f"{scratch}.diff", instance.start_patch if instance.start_patch.endswith("\n") else instance.start_patch + "\n")
    hidden = " ".join(shlex.quote(path) for path in instance.hidden_files or [])
    git = "/usr/bin/git -c core.hooksPath=/dev/null -c safe.directory=* -c core.quotePath=false -c init.defaultBranch=start"
    identity = " ".join(f"{key}={shlex.quote(value)}" for key, value in FIXED_IDENTITY.items())
    script = (
        f"set -e; cd {shlex.quote(repo_dir)}; export GIT_INDEX_FILE={scratch}.index GIT_CONFIG_GLOBAL=/dev/null {identity}; "
        f"{git} read-tree HEAD; {git} apply --verbose {scratch}.diff || {{ echo 'START_PATCH_FAILED'; exit 3; }}; "
        f"{git} add -A; bug=$({git} write-tree); "
        f"for f in {hidden}; do if [ -e \"$f\" ]; then {git} rm -r -q -f -- \"$f\"; fi; done; "
        f"start=$({git} write-tree); {git} diff --binary --full-index --no-renames $start $bug > {scratch}.tests; "
        f"unset GIT_INDEX_FILE; rm -rf .git; {git} init -q; {git} add -A; {git} commit -q --allow-empty -m {shlex.quote(START_MESSAGE)}; "
        f"{git} rev-parse HEAD"
    )
    try:
        result = await deployment.run(f"bash -c {shlex.quote(script)}", timeout=600)
        if "START_PATCH_FAILED" in result.output:
            raise WorkspaceError(f"Instance {instance.instance_id!r}: its start_patch does not apply to {instance.base_commit}:\n{result.output[-2000:]}")
        if result.exit_code != 0:
            raise WorkspaceError(f"Instance {instance.instance_id!r}: its start state could not be made ({result.exit_code}):\n{result.output[-2000:]}")
        tests = (await deployment.read_file(f"{scratch}.tests")).decode("utf-8", errors="replace")
    finally:
        await deployment.run(f"rm -f {scratch}.diff {scratch}.index {scratch}.tests")
    return result.output.strip().splitlines()[-1], tests
