"""Where a deployment's images live, as one object per place: the primitives that differ by place, so the code above
(workspaces, rewards, the CLI) calls them and never asks which deployment it is on.

    site = site_of(config.deployment)   # the config names its site as it names its implementation

- `NoImages` (local): a directory on this host, no image; a workspace is a checkout, its changes read by the host's git.
- `HereImages` (docker): this machine's engine; images are built, derived and read here; containers are labelled
  with a run id, pooled, and their changes read as the engine's diff.
- `NodeImages` (ray): the engines of a cluster's nodes; images are derived on a node and shared through a registry.
- `RemoteImages` (modal): a cloud's registry; nothing here reads or derives its images.

The site lives in `deployments`, below `workspaces`, so it cannot import how an image is derived or built (a clean
history, hidden tests removed, a mirror's checkout, an environment). It owns *where* such work runs and how a sandbox
then gets the result, and `workspaces` hands it the work as a function: `derive(job, image, ...)` runs `job` on this
engine, or on a node and pushes what it made to the registry (or, remote, runs the image as it is);
`environment_image(build)` builds here, finds it in the registry, or says it is not to be had. So each primitive is
one function in `workspaces` (`agent_images.agent_image`, `mirror_images.ensure_workspace_image`, ...) that calls the
site. What is left to branch on above is what a site can do (`runs_images`, `containers`, `derives_images`) where
the shape of the work differs (a host checkout, an image, an upload), never which place it is.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from uni_agent_gym.deployments.base import Deployment

Identity = tuple[str, dict[str, str]]  # an image's id and labels (what it records of the environment it was built from)
Job = Callable[..., Awaitable[str]]  # job(image, pull, *args) -> the name of the image made from `image` (or `image`)


@dataclass(frozen=True)
class Derived:
    """An image made for a sandbox: its name, how the sandbox gets it (`pull`; None where its config has no such
    option), and the source image's identity where it was asked for and can be read."""

    image: str
    pull: str | None
    identity: Identity | None = None

    @property
    def update(self) -> dict[str, str]:
        """What the sandbox's deployment config takes of it."""
        return {"image": self.image} if self.pull is None else {"image": self.image, "pull": self.pull}


class Site:
    """Where images live; the defaults are a place with none (local)."""

    # A sandbox can run a task's own image (else its workspace is always a checkout on the host).
    runs_images: ClassVar[bool] = False
    # Sandboxes are containers of engines the gym drives: their images' ids and labels are read (what they record,
    # validations), containers are labelled with a run id and pooled, and a mirror's checkout goes into an image's
    # layers so the engine's diff of a container is exactly the agent's work.
    containers: ClassVar[bool] = False
    # Images can be derived for a task (its clean history, its hidden tests removed).
    derives_images: ClassVar[bool] = False
    # Sandboxes run in this machine's engine (the demo checks it answers and has the base image).
    engine_here: ClassVar[bool] = False

    def __init__(self, config: Any) -> None:
        self.config = config

    @property
    def where(self) -> tuple:
        """What tells apart the places images are made in (a registry, a resource), for the caches of what was made."""
        return (type(self).__name__,)

    @property
    def asks_each_time(self) -> bool:
        """Whether what an image is must be asked again at every sandbox start (`pull: always`), not remembered."""
        return False

    @property
    def pool_size(self) -> int:
        """Idle sandboxes kept per image for later resets (`deployments/pool.py`); 0: no pool."""
        return 0

    def run_id(self) -> str | None:
        """The run id this deployment's containers are labelled with (`uni-agent-gym cleanup --run-id`), or None."""
        return None

    async def has_image(self, image: str) -> bool:
        """Whether `image` is already where the sandboxes run, so a mirror is not needed (`env.workspace: auto`)."""
        return False

    async def environment_image(self, build: Callable[[], Awaitable[None]]) -> bool:
        """Whether a task's image with its environment can be had for its sandbox, where a mirror was to go into the
        deployment's plain image; `build` makes it from the mirror, where that is how it is had."""
        return False

    async def derive(self, job: Job, image: str, *args: Any, identify: bool = False) -> Derived:
        """`job(image, pull, *args)` run where the images live, and how a sandbox gets what it made; with the
        identity of `image` when `identify`."""
        raise NotImplementedError(f"a {self.config.type} deployment derives no images")

    def diffs(self, deployment: Deployment) -> bool:
        """Whether the agent's changes in `deployment` are read as the engine's diff of its container, into a fresh
        container beside it (`rewards/capture.py`)."""
        return False

    def on_host(self, deployment: Deployment) -> bool:
        """Whether `deployment` is a directory on this host, whose changes the host's git reads with the task's
        trusted repository."""
        return False

    def remove_at_exit(self, deployments: list[Deployment]) -> None:
        """Remove the pooled sandboxes a process leaves idle as it exits (blocking; best effort)."""


class NoImages(Site):
    """local: a directory on this host."""

    def on_host(self, deployment: Deployment) -> bool:
        return deployment.config.type == self.config.type


class RemoteImages(Site):
    """modal: images in a cloud's registry; they run as they are, and nothing here reads them."""

    runs_images = True

    async def derive(self, job: Job, image: str, *args: Any, identify: bool = False) -> Derived:
        return Derived(image, None)


class _Engines(Site):
    """Docker engines the gym drives (this machine's, or a cluster's nodes')."""

    runs_images = containers = derives_images = True

    @property
    def asks_each_time(self) -> bool:
        return self.config.pull == "always"

    @property
    def pool_size(self) -> int:
        return self.config.pool_size

    def run_id(self) -> str | None:
        from uni_agent_gym.deployments.docker import default_run_id

        return self.config.run_id or default_run_id()

    def diffs(self, deployment: Deployment) -> bool:
        """docker diff cannot see into volumes: with read_only_root the workspace is one. On a Ray cluster both are
        containers of the agent's node (the reward places the fresh one beside it)."""
        return deployment.container is not None and deployment.config.type == self.config.type and not deployment.config.read_only_root


_identities: dict[str, Identity | None] = {}  # image -> its id and labels here, asked once per process


class HereImages(_Engines):
    """docker: this machine's engine."""

    engine_here = True

    async def has_image(self, image: str) -> bool:
        from uni_agent_gym.deployments.docker import image_exists

        return await asyncio.to_thread(image_exists, image)

    async def environment_image(self, build: Callable[[], Awaitable[None]]) -> bool:
        await build()
        return True

    async def derive(self, job: Job, image: str, *args: Any, identify: bool = False) -> Derived:
        made = await job(image, self.config.pull, *args)
        return Derived(made, "never" if made != image else self.config.pull, await self._identity(image) if identify else None)

    async def _identity(self, image: str) -> Identity | None:
        """Asked once per process (a warm reset costs no engine call), every time under `pull: always`."""
        from uni_agent_gym.deployments.docker import image_identity

        if self.asks_each_time or image not in _identities:
            _identities[image] = await asyncio.to_thread(image_identity, image)
        return _identities[image]

    def remove_at_exit(self, deployments: list[Deployment]) -> None:
        from uni_agent_gym.deployments.docker import docker_client

        for deployment in deployments:
            try:
                docker_client().api.remove_container(deployment.container_id, force=True, v=True)
            except Exception:  # noqa: BLE001 - best effort at exit; `uni-agent-gym cleanup` reaps the rest
                pass


class NodeImages(_Engines):
    """ray: the engines of the cluster's nodes; what is made on one node reaches the others through the registry.
    The driver needs no engine of its own (verl's agent-loop workers sit on GPU nodes). A container left idle at
    exit is removed by its node's host once this job ends."""

    @property
    def where(self) -> tuple:
        return (type(self).__name__, self.config.registry, self.config.resource)

    async def environment_image(self, build: Callable[[], Awaitable[None]]) -> bool:
        return True  # from the cluster's registry (`images build`, then `images push`)

    async def derive(self, job: Job, image: str, *args: Any, identify: bool = False) -> Derived:
        from uni_agent_gym.deployments.ray import run_on_a_node

        made, found = await run_on_a_node(self.config, _made_on_a_node, job, image, args, self.config.registry, self.config.pull, identify)
        return Derived(made, "missing" if made != image else self.config.pull, found)


def _made_on_a_node(job: Job, image: str, args: tuple, registry: str | None, pull: str, identify: bool) -> tuple[str, Identity | None]:
    """On a sandbox node (a Ray task): `image` from the registry where missing, `job` run on this node's engine, and
    what it made pushed to the registry once; with the identity of `image` when asked."""
    from uni_agent_gym.deployments.docker import image_identity
    from uni_agent_gym.deployments.registry import ensure_from_registry, push
    from uni_agent_gym.errors import ConfigError
    from uni_agent_gym.named_locks import machine_lock

    ensure_from_registry(image, registry, pull)
    found = image_identity(image) if identify else None

    async def make() -> str:
        made = await job(image, "never", *args)
        if made != image:
            if not registry:
                raise ConfigError(f"{made} was made on a Ray node, and the other nodes can only get it from a registry: set deployment.registry")
            async with machine_lock(f"push {made} to {registry}"):
                await asyncio.to_thread(push, made, registry)
        return made

    return asyncio.run(make()), found


def site_of(config: Any) -> Site:
    """The site of a deployment config (its `site`, `module:Class`, as it names its implementation)."""
    module_name, class_name = config.site.split(":")
    return getattr(importlib.import_module(module_name), class_name)(config)
