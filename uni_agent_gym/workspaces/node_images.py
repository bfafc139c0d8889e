"""The image a Ray node's sandbox runs for an instance, made on a sandbox node rather than where the driver runs
(which may have no Docker engine: verl's agent-loop workers sit on GPU nodes).

One Ray task on a node that offers the sandbox resource pulls the instance's image from the registry, derives
from it the clean-history image (an image not built clean) and the image without the task's hidden tests (the
agent's sandbox of an R2E-Gym task), as `history_images` and `hidden_images` do on docker, and pushes what it
derived to the registry once. Every other node pulls it from there. The driver remembers the answer per process.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uni_agent_gym.deployments.docker import image_identity
from uni_agent_gym.deployments.ray import run_on_a_node
from uni_agent_gym.deployments.registry import ensure_from_registry, push
from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.workspaces.hidden_images import image_without
from uni_agent_gym.workspaces.history_images import ensure_clean_image
from uni_agent_gym.workspaces.host_git import WorkspaceError

_made: dict[tuple, tuple[str, tuple[str, dict[str, str]] | None]] = {}  # what the nodes answered, in this process


async def image_for_the_nodes(image: str, mode: str, start: str, repo_dir: str, hidden_paths: list[str] | None, config: Any) -> tuple[str, tuple[str, dict[str, str]] | None]:
    """The image the sandboxes of `config` (a ray deployment) run (`image`, or what a node derived from it and
    pushed to `config.registry`), and the id and labels of `image` (what it records of its environment)."""
    key = (image, mode, start, repo_dir, json.dumps(sorted(hidden_paths or [])), config.registry, config.resource)
    if config.pull == "always" or key not in _made:
        _made[key] = await run_on_a_node(config, _derive_and_push, image, mode, start, repo_dir, hidden_paths, config.registry, config.pull)
    return _made[key]


def _derive_and_push(image: str, mode: str, start: str, repo_dir: str, hidden_paths: list[str] | None, registry: str | None, pull: str) -> tuple[str, tuple[str, dict[str, str]] | None]:
    """On a sandbox node (a Ray task): the image, pulled from the registry if missing, made clean and without the
    hidden tests where asked, and what was derived pushed to the registry; with the image's id and labels."""
    ensure_from_registry(image, registry, pull)
    found = image_identity(image)

    async def derive() -> str:
        name = await ensure_clean_image(image, mode, start, repo_dir, "never")
        if hidden_paths:
            name = await image_without(name, hidden_paths)
        if name != image:
            if not registry:
                raise WorkspaceError(f"{name} was derived on a Ray node, and the other nodes can only get it from a registry: set deployment.registry")
            async with machine_lock(f"push {name} to {registry}"):
                await asyncio.to_thread(push, name, registry)
        return name

    return asyncio.run(derive()), found
