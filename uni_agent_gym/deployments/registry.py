"""Images through a registry: what `images push` sends from this engine, and what a node pulls when it
lacks an image. The image keeps its own name on every engine; in the registry it is `HOST:PORT/<name>`.
Every function is blocking (call it through a thread from async code).
"""

from __future__ import annotations

from collections.abc import Callable

import docker.errors
from docker.auth import resolve_repository_name
from docker.utils import parse_repository_tag

from uni_agent_gym.deployments.docker import docker_client, image_exists
from uni_agent_gym.errors import DeploymentError, ImageNotFoundError


def registry_name(image: str, registry: str) -> str:
    """`swebench/sweb.eval.x86_64.x:latest` in `127.0.0.1:5000` -> `127.0.0.1:5000/swebench/sweb.eval.x86_64.x:latest`.
    An image already named after a registry (this one or another) goes by its name in that registry:
    `127.0.0.1:6000/a/b:1` in `127.0.0.1:5000` -> `127.0.0.1:5000/a/b:1`."""
    repository, tag = parse_repository_tag(image)
    _, repository = resolve_repository_name(repository)  # without the registry it names, if any
    return f"{registry.rstrip('/')}/{repository}:{tag or 'latest'}"


def push(image: str, registry: str, log: Callable[[str], None] = lambda message: None) -> str:
    """Push `image` from this engine to `registry` (layers the registry holds are skipped); its name there."""
    try:
        docker_client().images.get(image).tag(registry_name(image, registry))
    except docker.errors.ImageNotFound:
        raise ImageNotFoundError(f"Cannot push {image!r}: this Docker engine has no such image") from None
    target = registry_name(image, registry)
    repository, tag = parse_repository_tag(target)
    try:
        for event in docker_client().api.push(repository, tag=tag, stream=True, decode=True):
            if "error" in event:
                raise DeploymentError(f"Pushing {image} to {registry} failed: {event['error']}")
    except docker.errors.APIError as exc:
        raise DeploymentError(f"Pushing {image} to {registry} failed: {exc.explanation or exc}") from None
    log(f"pushed {image} -> {target}")
    return target


def ensure_from_registry(image: str, registry: str | None, pull: str) -> None:
    """Make sure this engine has `image`: pulled from `registry` (as `pull` says: missing, always, never)
    and tagged with its own name, so the container runs what every other node runs."""
    if registry is None:
        from uni_agent_gym.deployments.docker import ensure_image

        ensure_image(image, pull)
        return
    if pull != "always" and image_exists(image):
        return
    if pull == "never":
        raise ImageNotFoundError(f"Docker image {image!r} is not on this node and deployment.pull is 'never'")
    source = registry_name(image, registry)
    repository, tag = parse_repository_tag(source)
    try:
        docker_client().images.pull(repository, tag=tag).tag(image)
    except docker.errors.APIError as exc:
        raise ImageNotFoundError(
            f"Docker image {image!r} is not on this node and pulling {source} failed ({exc.explanation or exc}). "
            f"Push it from a machine that has it: `uni-agent-gym images push --registry {registry} {image}`"
        ) from None
