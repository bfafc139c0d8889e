"""A sandbox holding an instance's repository at its `base_commit`.

Two ways to get there:
- *image*: the instance's own image already holds the repository at `repo_dir` (the official
  `swebench/sweb.eval.x86_64.<id>` images, or those `uni-agent-gym images build` makes offline);
- *mirror*: the deployment's image (or the host, for `local`) plus a checkout from a mirror of the
  repository: a local git repository, a plain directory (committed with a fixed identity and date, so
  the same files always give the same commit), a git bundle, or a clone URL.
Mirrors are cloned once into a bare repository under the cache directory. The agent never sees that
clone: its repository holds the start commit's history and nothing later (`history.py`, `env.history`),
from a clean repository made once per start commit, or from an image cleaned once (`history_images.py`).
On `local` every reset is a fresh checkout from the instance's trusted repository (`local_workspace.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments import Deployment, make_deployment
from uni_agent_gym.deployments.pool import acquire
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.instances import image_name
from uni_agent_gym.named_locks import free_slot, machine_lock

if TYPE_CHECKING:
    from uni_agent_gym.envs.history import CleanHistory

FIXED_IDENTITY = {
    "GIT_AUTHOR_NAME": "uni-agent-gym fixtures",
    "GIT_AUTHOR_EMAIL": "fixtures@uni-agent-gym.invalid",
    "GIT_COMMITTER_NAME": "uni-agent-gym fixtures",
    "GIT_COMMITTER_EMAIL": "fixtures@uni-agent-gym.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
IMAGE_REPO_DIR = "/testbed"


class WorkspaceError(UniAgentGymError, RuntimeError):
    """The repository of an instance cannot be put into the sandbox."""


async def host_command(argv: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a program on the host and return its stdout; `WorkspaceError` with the end of its output on failure."""
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    if process.returncode != 0:
        output = (out + err).decode(errors="replace").strip()
        raise WorkspaceError(f"`{' '.join(argv)[:200]}` failed ({process.returncode}):\n{output[-3000:]}")
    return out.decode(errors="replace")


async def git(*args: str, cwd: str | Path | None = None, env: dict[str, str] | None = None) -> str:
    """Host git that accepts repositories of any owner (unpacked sdists keep their tarball's owner) and
    reads objects as stored (a mirror's replace refs could otherwise swap one commit's files for another's)."""
    return await host_command(["git", "--no-replace-objects", "-c", "safe.directory=*", *args], cwd=cwd, env=env)


def _is_git_source(source: str) -> bool:
    path = Path(source)
    return not path.exists() or path.is_file() or (path / ".git").exists() or (path / "HEAD").is_file()


async def mirror_repository(repo: str, source: str, cache_dir: str, commit: str | None = None) -> Path:
    """A bare repository under the cache holding `source`'s history, made once per repo; a git source
    is fetched again when the cache lacks `commit` (the source gained branches since)."""
    cache = Path(cache_dir).expanduser() / "mirrors" / f"{repo.replace('/', '__')}.git"
    plain_directory = not _is_git_source(source)
    async with machine_lock(f"mirror {cache.resolve()}"):
        if cache.exists() and plain_directory and await _directory_changed(cache, source):
            await asyncio.to_thread(shutil.rmtree, cache)
        if cache.exists():
            if commit and not plain_directory and not await has_commit(cache, commit):
                await git("--git-dir", str(cache), "fetch", "--quiet", source, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
            return cache
        cache.parent.mkdir(parents=True, exist_ok=True)
        building = cache.with_name(f"{cache.name}.tmp-{secrets.token_hex(4)}")
        try:
            if not plain_directory:
                await git("clone", "--bare", "--quiet", source, str(building))
            else:  # a plain directory: one commit of all its files, with a fixed identity and date
                await git("init", "--bare", "--quiet", str(building))
                tree = ["--git-dir", str(building), "--work-tree", str(Path(source).resolve())]
                await git(*tree, "add", "-A", "-f")
                await git(*tree, "commit", "--quiet", "-m", "base", env=FIXED_IDENTITY)
            os.replace(building, cache)
        finally:
            if building.exists():
                await asyncio.to_thread(shutil.rmtree, building, True)
    return cache


async def has_commit(repository: Path, commit: str) -> bool:
    """Whether the repository (a git dir) holds `commit`."""
    try:
        await git("--git-dir", str(repository), "cat-file", "-e", f"{commit}^{{commit}}")
        return True
    except WorkspaceError:
        return False


async def _directory_changed(cache: Path, source: str) -> bool:
    """Whether a plain-directory mirror's files differ from the commit made of them."""
    status = await git("--git-dir", str(cache), "--work-tree", str(Path(source).resolve()), "status", "--porcelain")
    return bool(status.strip())


async def head_commit(cache: Path) -> str:
    """The commit HEAD of a mirror points to."""
    return (await git("--git-dir", str(cache), "rev-parse", "HEAD")).strip()


def history_mode(instance: dict[str, Any], config: GymConfig) -> str:
    """`env.history`, or `none` for a task whose ancestry would leak its fix (SWE-smith: the start's
    parent is the unbroken code)."""
    return "none" if instance.get("history") == "none" else config.env.history


async def workspace_mode(instance: dict[str, Any], config: GymConfig) -> str:
    """'image' or 'mirror' for this instance under this config (see the module docstring)."""
    mirror = config.env.mirrors.get(instance["repo"]) or instance.get("mirror")
    if instance.get("hidden_paths"):  # R2E-Gym: the tests exist only in the task's image
        if config.deployment.type == "local" or config.env.workspace == "mirror":
            raise WorkspaceError(
                f"Instance {instance['instance_id']!r} ({instance.get('family')}) runs only in its image, where its tests are: "
                "use a docker deployment with env.workspace image or auto"
            )
        return "image"
    if config.deployment.type == "local":
        return "mirror"
    if config.env.workspace != "auto":
        return config.env.workspace
    if not mirror:
        return "image"
    if config.deployment.type == "docker":
        from uni_agent_gym.deployments.docker import image_exists

        image = instance.get("image_name") or image_name(instance["instance_id"])
        return "image" if await asyncio.to_thread(image_exists, image) else "mirror"
    return "mirror"


async def open_workspace(instance: dict[str, Any], config: GymConfig, *, grading: bool = False) -> tuple[Deployment, str]:
    """A started deployment with the repository at `base_commit`, and the repository's directory in it.
    `grading`: the sandbox that grades, which for a task with `hidden_paths` runs the image that has them."""
    deployment_config = config.deployment
    mode = await workspace_mode(instance, config)
    repo_dir = config.env.repo_dir
    if mode == "image":  # the family's image (official, or built here) holds the repository at its workdir
        image = instance.get("image_name") or image_name(instance["instance_id"])
        workdir = instance.get("workdir", IMAGE_REPO_DIR)
        if not workdir:
            raise WorkspaceError(f"Instance {instance['instance_id']!r}: its row does not say where its image {image} keeps the repository")
        update = {"image": image, "workdir": workdir}
        if deployment_config.type == "docker":  # an image not built clean is derived clean once (not modal: its images are remote)
            from uni_agent_gym.envs.history_images import ensure_clean_image

            clean = await ensure_clean_image(image, history_mode(instance, config), instance["base_commit"], workdir, deployment_config.pull)
            update.update(image=clean, pull="never" if clean != image else deployment_config.pull)
        if instance.get("hidden_paths") and not grading:
            if deployment_config.type != "docker":
                raise WorkspaceError(
                    f"Instance {instance['instance_id']!r}: its hidden tests are removed from the agent's image by deriving a "
                    f"docker image without them, which a {deployment_config.type} deployment cannot: use docker"
                )
            from uni_agent_gym.envs.hidden_images import image_without

            update.update(image=await image_without(update["image"], instance["hidden_paths"]), pull="never")
        return await acquire(deployment_config.model_copy(update=update), workdir), workdir

    source = config.env.mirrors.get(instance["repo"]) or instance.get("mirror")
    if not source:
        raise WorkspaceError(
            f"Instance {instance['instance_id']!r}: no mirror of {instance['repo']} is configured "
            f"(env.mirrors[{instance['repo']!r}]) and the {deployment_config.type} deployment needs one"
        )
    from uni_agent_gym.envs.history import clean_history, fresh_checkout

    cache = await mirror_repository(instance["repo"], source, config.env.cache_dir, instance["base_commit"])
    history = await clean_history(cache, instance["base_commit"], history_mode(instance, config), instance["instance_id"])
    if deployment_config.type == "local":
        return await _open_local(instance, config, history)

    deployment = await acquire(deployment_config.model_copy(update={"workdir": repo_dir}), repo_dir)
    try:
        with tempfile.TemporaryDirectory(prefix="uni-agent-gym-checkout-") as scratch:
            await fresh_checkout(history.git_dir, history.start, Path(scratch) / "repo")
            await deployment.upload(Path(scratch) / "repo", repo_dir)
        await deployment.run(f"cd {repo_dir}")
    except BaseException:
        await deployment.stop()
        raise
    return deployment, repo_dir


async def _mark_a_changed_venv(deployment: Deployment, workspace: Path) -> None:
    from uni_agent_gym.envs.local_environment import renew_tampered_venv

    deployment.release_report.update(await renew_tampered_venv(workspace))


async def _open_local(instance: dict[str, Any], config: GymConfig, history: CleanHistory) -> tuple[Deployment, str]:
    """A fresh local checkout (see `local_workspace.py`), with the instance's venv unless the row says
    it needs none (the toy task). The checkout's path is stable, so the prompt naming it is the same at
    every reset (Gymnasium's determinism contract): under the cache, one per instance with an environment
    (the venv's editable install points at it; episodes take turns), else one per concurrent episode
    (the first free slot: `testbed`, then `slot-1/testbed`, ...)."""
    from uni_agent_gym.envs.local_environment import ensure_local_environment, venv_environment
    from uni_agent_gym.envs.local_workspace import ensure_trusted_repository, local_workspace_dir, recreate_checkout
    from uni_agent_gym.specs import environment_spec, load_environments

    spec = None
    if instance.get("needs_environment", True):
        spec = environment_spec(instance, load_environments(config.env.environments))
    deployment_config = config.deployment
    workspace = local_workspace_dir(instance["instance_id"], config)
    checkout_lock = f"local checkout {workspace.resolve()}"
    held = contextlib.AsyncExitStack()
    if spec is not None:  # the venv's variables live in the config, so a restarted shell keeps them
        update = {"env": {**deployment_config.env, **venv_environment(workspace / "venv", spec)}}
        if not deployment_config.workdir:
            update["workdir"] = str(workspace / "testbed")
        deployment_config = deployment_config.model_copy(update=update)
        # One checkout, so one episode at a time (in any process); the next waits until this one stops.
        await held.enter_async_context(machine_lock(checkout_lock))
    elif not deployment_config.workdir:  # no venv ties the checkout to one path: side by side in slots
        slot = await held.enter_async_context(free_slot(checkout_lock))
        checkout = workspace / "testbed" if slot == 0 else workspace / f"slot-{slot}" / "testbed"
        deployment_config = deployment_config.model_copy(update={"workdir": str(checkout)})
    try:
        deployment = make_deployment(deployment_config)
        if spec is not None:  # runs before the lock goes: the next episode never starts on a venv this one changed
            held.push_async_callback(_mark_a_changed_venv, deployment, workspace)
        deployment.on_stop(held.aclose)
        await deployment.start()
    except BaseException:
        await held.aclose()
        raise
    repo_dir = deployment.workdir  # the repository itself: configured, or the stable checkout path above
    try:
        await ensure_trusted_repository(workspace, history)
        commit = history.start
        if spec is not None:
            commit = await ensure_local_environment(spec, workspace, repo_dir, history.start, config.env.interpreters)
        await recreate_checkout(workspace, commit, Path(repo_dir))
        await deployment.run(f"cd {shlex.quote(repo_dir)}")
    except BaseException:
        await deployment.stop()
        raise
    return deployment, repo_dir
