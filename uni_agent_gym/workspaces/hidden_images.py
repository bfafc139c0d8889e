"""Images without a task's hidden tests: what the agent's sandbox of an R2E-Gym task runs.

R2E-Gym's images carry their tests (/r2e_tests) and runner (/testbed/run_tests.sh). Moving them
somewhere else in the container, as R2E-Gym does, leaves them readable by a root agent; deleting them
at reset leaves a window and defeats the warm pool. So the agent's image is derived once from the
task's image: one layer that removes the task's `hidden_paths`, labelled with them and with the source
image's id, named `<source>-hidden-<digest of the paths>`, derived again when the source changes (a new
pull). Grading runs the original image, where the tests are.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shlex
import tempfile
from pathlib import Path

from docker.utils import parse_repository_tag

from uni_agent_gym.deployments.docker import docker_client, image_exists, image_labels
from uni_agent_gym.errors import ImageNotFoundError
from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.workspaces.image_builder import docker_build

HIDDEN_LABEL = "uni-agent-gym.hidden"  # the paths removed, as JSON
SOURCE_LABEL = "uni-agent-gym.hidden.source"  # the id of the image they were removed from
_known: dict[tuple[str, str], str] = {}  # what was answered in this process


def hidden_image_name(image: str, paths: list[str]) -> str:
    """`namanjain12/pillow_final:abc` -> `namanjain12/pillow_final:abc-hidden-<8 hex>`."""
    repository, tag = parse_repository_tag(image)
    digest = hashlib.sha256(json.dumps(sorted(paths)).encode()).hexdigest()[:8]
    return f"{repository}:{(tag or 'latest').replace('sha256:', 'digest-')[:100]}-hidden-{digest}"


def _derive(image: str, paths: list[str]) -> str:
    """The derived image's name, built now if missing or made from another build of `image` (blocking)."""
    if not image_exists(image):
        raise ImageNotFoundError(
            f"Docker image {image!r} is not on this machine; its tests exist only in it, so pull it where a registry "
            "is reachable (`docker pull`, then `docker save` / `docker load`)"
        )
    client = docker_client()
    source_id = client.images.get(image).id
    name = hidden_image_name(image, paths)
    labels = image_labels(name) or {}
    wanted = json.dumps(sorted(paths))
    if labels.get(SOURCE_LABEL) == source_id and labels.get(HIDDEN_LABEL) == wanted:
        return name

    removal = " ".join(shlex.quote(path) for path in paths)
    dockerfile = (
        f"FROM {image}\nRUN rm -rf {removal}\n"
        f"LABEL {HIDDEN_LABEL}={json.dumps(wanted)} {SOURCE_LABEL}={json.dumps(source_id)}\n"
    )
    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-hidden-") as scratch:
        (Path(scratch) / "Dockerfile").write_text(dockerfile)
        docker_build(Path(scratch), name, lambda message: None)
    return name


async def image_without(image: str, paths: list[str]) -> str:
    """The image the agent runs for a task whose `hidden_paths` are `paths` (made once per source build)."""
    key = (image, json.dumps(sorted(paths)))
    if key in _known:
        return _known[key]
    async with machine_lock(f"hidden image {image}"):
        _known[key] = await asyncio.to_thread(_derive, image, paths)
    return _known[key]
