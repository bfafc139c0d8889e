"""A sandbox holding an instance's repository at its `base_commit`.

Two ways to get there:
- *image*: the instance's own image already holds the repository at `repo_dir` (the official
  `swebench/sweb.eval.x86_64.<id>` images, or those `uni-agent-gym images build` makes offline);
- *mirror*: the deployment's image (or the host, for `local`) plus a checkout from a mirror of the
  repository: a local git repository, a plain directory (committed with a fixed identity and date, so
  the same files always give the same commit), a git bundle, or a clone URL. On docker and ray the
  checkout goes into an image built once (`mirror_images.py`: the reward reads the agent's work from the
  container's own layer); on modal it is copied into each sandbox.
Mirrors are cloned once into a bare repository under the cache directory. The agent never sees that
clone: its repository holds the start commit's history and nothing later (`history.py`, `env.history`),
from a clean repository made once per start commit, or from an image cleaned once (`history_images.py`).
On `local` every reset is a fresh checkout from the instance's trusted repository (`local_checkout.py`).
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import tempfile
from pathlib import Path

from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import Task
from uni_agent_gym.deployments import Deployment, make_deployment
from uni_agent_gym.deployments.pool import acquire
from uni_agent_gym.deployments.sites import site_of
from uni_agent_gym.named_locks import free_slot, machine_lock
from uni_agent_gym.specs import environment_spec, load_environments
from uni_agent_gym.toolchains import PYTHON
from uni_agent_gym.workspaces.history import CleanHistory, clean_history, fresh_checkout, history_mode
from uni_agent_gym.workspaces.host_git import WorkspaceError
from uni_agent_gym.workspaces.local_checkout import ensure_trusted_repository, local_workspace_dir, recreate_checkout
from uni_agent_gym.workspaces.local_venv import ensure_local_environment, renew_tampered_venv, venv_environment
from uni_agent_gym.workspaces.mirrors import mirror_repository
from uni_agent_gym.workspaces.agent_images import agent_image
from uni_agent_gym.workspaces.episode import Episode
from uni_agent_gym.workspaces.recorded_environment import EnvironmentUnavailable, RecordedImage, recorded_image
from uni_agent_gym.workspaces.validations_file import load as load_validations, task_validation

logger = logging.getLogger(__name__)


async def workspace_mode(instance: Task, config: GymConfig) -> str:
    """'image' or 'mirror' for this instance under this config (see the module docstring)."""
    mirror = config.env.mirrors.get(instance.repo) or instance.mirror
    site = site_of(config.deployment)
    if instance.hidden_paths:  # R2E-Gym: the tests exist only in the task's image
        if not site.runs_images or config.env.workspace == "mirror":
            raise WorkspaceError(
                f"Instance {instance.instance_id!r} ({instance.family}) runs only in its image, where its tests are: "
                "use a docker deployment with env.workspace image or auto"
            )
        return "image"
    if not site.runs_images:
        return "mirror"
    if config.env.workspace != "auto":
        return config.env.workspace
    if not mirror:
        return "image"
    return "image" if await site.has_image(instance.image) else "mirror"


async def open_workspace(instance: Task, config: GymConfig, *, grading: bool = False) -> Episode:
    """The episode of a started deployment with the repository at `base_commit`: the sandbox, the repository's directory
    in it, and what its image records (`recorded_environment.py`); its start state is `start_state.py`'s.
    `grading`: the sandbox that grades, which for a task with `hidden_paths` runs the image that has them."""
    deployment_config = config.deployment
    site = site_of(deployment_config)
    mode = await workspace_mode(instance, config)
    if mode == "mirror" and site.runs_images and instance.needs_environment:
        mode = await _environment_image(instance, config)
    if mode == "image":
        return await _open_image(instance, config, grading)
    repo_dir = config.env.repo_dir
    source = config.env.mirrors.get(instance.repo) or instance.mirror
    if not source:
        raise WorkspaceError(
            f"Instance {instance.instance_id!r}: no mirror of {instance.repo} is configured "
            f"(env.mirrors[{instance.repo!r}]) and the {deployment_config.type} deployment needs one"
        )
    cache = await mirror_repository(instance.repo, source, config.env.cache_dir, instance.base_commit)
    history = await clean_history(cache, instance.base_commit, history_mode(instance, config), instance.instance_id)
    if not site.runs_images:
        return Episode(instance, *await _open_local(instance, config, history))

    if site.containers:  # the checkout in an image's layers, not the container's (mirror_images.py)
        from uni_agent_gym.workspaces.mirror_images import ensure_workspace_image

        made = await ensure_workspace_image(deployment_config.image, instance.repo, history, repo_dir, site)
        return Episode(instance, await acquire(deployment_config.model_copy(update={**made.update, "workdir": repo_dir}), repo_dir), repo_dir)
    deployment = await acquire(deployment_config.model_copy(update={"workdir": repo_dir}), repo_dir)
    try:
        with tempfile.TemporaryDirectory(prefix="uni-agent-gym-checkout-") as scratch:
            await fresh_checkout(history.git_dir, history.start, Path(scratch) / "repo")
            await deployment.upload(Path(scratch) / "repo", repo_dir)
        await deployment.run(f"cd {shlex.quote(repo_dir)}")
    except BaseException:
        await deployment.stop()
        raise
    return Episode(instance, deployment, repo_dir)


async def _environment_image(instance: Task, config: GymConfig) -> str:
    """The workspace of a task that needs its environment (a toolchain or venv, its install and build) where a mirror
    was to be checked out into the deployment's plain image, which has none: its instance image, where the site can
    have it (on docker built here from the mirror once; on ray from the cluster's registry, built and pushed by
    `images build`). Anything else is an error naming what is missing, never a sandbox without the environment (its
    tests could not run: a correct patch graded 0)."""
    instance_id = instance.instance_id

    async def build() -> None:
        from uni_agent_gym.errors import UniAgentGymError
        from uni_agent_gym.workspaces.image_builder import build_instance_image

        try:
            await build_instance_image(instance, config, load_environments(config.env.environments), log=logger.info)
        except UniAgentGymError as exc:
            raise EnvironmentUnavailable(
                f"Instance {instance_id!r} has no image, and its environment could not be built from the mirror (a sandbox "
                f"without it would grade a correct patch 0): {exc}"
            ) from None

    if not await site_of(config.deployment).environment_image(build):
        raise EnvironmentUnavailable(
            f"Instance {instance_id!r} needs its environment (toolchain or venv, install, build), which a mirror checked out "
            f"into a {config.deployment.type} deployment's image does not have: run it on its instance image (env.workspace: image)"
        )
    return "image"


async def _open_image(instance: Task, config: GymConfig, grading: bool) -> Episode:
    """The family's image (official, or built here) holds the repository at its workdir; checked against the task
    where it records its environment."""
    deployment_config = config.deployment
    image = instance.image
    workdir = instance.workdir
    if not workdir:
        raise WorkspaceError(f"Instance {instance.instance_id!r}: its row does not say where its image {image} keeps the repository")
    hidden = instance.hidden_paths if not grading else None
    site = site_of(deployment_config)
    if hidden and not site.derives_images:
        raise WorkspaceError(
            f"Instance {instance.instance_id!r}: its hidden tests are removed from the agent's image by deriving a "
            f"docker image without them, which a {deployment_config.type} deployment cannot: use docker or ray"
        )
    # an image not built clean is derived clean once, and without the hidden tests (not on modal: its images are remote)
    made = await agent_image(site, image, history_mode(instance, config), instance.base_commit, workdir, hidden)
    recorded = _checked(instance, image, made.identity, config, workdir)
    update = {**made.update, "workdir": workdir}
    return Episode(instance, await acquire(deployment_config.model_copy(update=update), workdir), workdir, image=recorded)


def _checked(instance: Task, image: str, found: tuple[str, dict[str, str]] | None, config: GymConfig, workdir: str) -> RecordedImage | None:
    """What the image records for the task (`recorded_environment.recorded_image`), and under `env.validation: require`
    only an image whose environment passed `validate` here, or in env.validations on this image id (docker and ray)."""
    recorded = recorded_image(instance, image, found, load_environments(config.env.environments), workdir)
    if config.env.validation == "require" and site_of(config.deployment).containers:
        validations = load_validations(config.env.validations) if config.env.validations else None  # merged with the store
        environment, image_id = (recorded.environment, recorded.image_id) if recorded is not None else (None, None)
        if not task_validation(instance, config.env.cache_dir, validations, environment, image_id).environment_validated:
            raise EnvironmentUnavailable(
                f"Instance {instance.instance_id!r}: its image {image} has not passed `uni-agent-gym validate` on this machine "
                "(env.validation: require); validate it, or leave the task out"
            )
    return recorded


async def _mark_a_changed_venv(deployment: Deployment, workspace: Path) -> None:
    deployment.release_report.update(await renew_tampered_venv(workspace))


async def _open_local(instance: Task, config: GymConfig, history: CleanHistory) -> tuple[Deployment, str]:
    """A fresh local checkout (see `local_checkout.py`), with the instance's venv unless the row says
    it needs none (the toy task). The checkout's path is stable, so the prompt naming it is the same at
    every reset (Gymnasium's determinism contract): under the cache, one per instance with an environment
    (the venv's editable install points at it; episodes take turns), else one per concurrent episode
    (the first free slot: `testbed`, then `slot-1/testbed`, ...)."""
    spec = None
    if instance.needs_environment:
        spec = environment_spec(instance, load_environments(config.env.environments))
        if spec.language != PYTHON:
            raise WorkspaceError(
                f"Instance {instance.instance_id!r} is a {spec.language} task, and the local deployment makes Python "
                "environments only: run it on docker or ray (`uni-agent-gym images build` makes its toolchain image)"
            )
    deployment_config = config.deployment
    workspace = local_workspace_dir(instance.instance_id, config)
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
