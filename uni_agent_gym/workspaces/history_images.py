"""Clean instance images: the repository at /testbed holds nothing past its start commit (`history.py`).

Images that `images build` makes are built clean and carry `HISTORY_LABEL` (the mode). Any other image
(an official one pulled from a registry, or one built before the label existed) is derived once: a
`docker build` `FROM` it whose one layer runs `CLEAN_SCRIPT` on /testbed, labelled with the mode and
the source image's id, named `<source>-history-<mode>`. It is derived again when the source changes
(a new pull); image workspaces run the derived image.
"""

from __future__ import annotations

import asyncio
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

import docker.errors
from docker.utils import parse_repository_tag

from uni_agent_gym.deployments.docker import docker_client, ensure_image
from uni_agent_gym.workspaces.history import CLEAN_SCRIPT, HISTORY_LABEL, SCRIPT_PATH
from uni_agent_gym.workspaces.image_builder import docker_build
from uni_agent_gym.named_locks import machine_lock

SOURCE_LABEL = "uni-agent-gym.history.source"  # the id of the image a clean image was derived from
_clean_images: dict[tuple[str, str, str, str], str] = {}  # what clean_image answered, per process


def derived_name(image: str, mode: str) -> str:
    """`swebench/sweb.eval.x86_64.x:latest` -> `swebench/sweb.eval.x86_64.x:latest-history-ancestry`."""
    repository, tag = parse_repository_tag(image)
    if tag and tag.startswith("sha256:"):  # repository@sha256:digest
        tag = f"digest-{tag.removeprefix('sha256:')[:16]}"
    return f"{repository}:{tag or 'latest'}-history-{mode}"


def history_dockerfile(source: str, mode: str, start: str, source_id: str, repo_dir: str) -> str:
    """The derivation: one layer that cleans the repository, labelled with what it was made from."""
    arguments = " ".join(shlex.quote(part) for part in (repo_dir, mode, start) if part)
    return (
        f"FROM {source}\n"
        f"COPY clean-history.sh {SCRIPT_PATH}\n"
        f"RUN sh {SCRIPT_PATH} {arguments} && rm -f {SCRIPT_PATH}\n"
        f'LABEL {HISTORY_LABEL}="{mode}" {SOURCE_LABEL}="{source_id}"\n'
    )


def _labels(image: str) -> tuple[str, dict[str, str]]:
    found = docker_client().images.get(image)
    return found.id, found.labels or {}


def clean_image(image: str, mode: str, start: str, repo_dir: str, pull: str, log: Callable[[str], None]) -> str:
    """The image to run for `image` under `env.history: mode` (blocking): `image` itself when it is
    labelled clean in that mode, else its derived image, made now if missing or stale. `start` is the
    instance's base_commit (the `none` mode's root gets its tree)."""
    ensure_image(image, pull)
    source_id, labels = _labels(image)
    if labels.get(HISTORY_LABEL) == mode:
        return image
    name = derived_name(image, mode)
    try:
        _, derived = _labels(name)
    except docker.errors.ImageNotFound:
        derived = {}
    if derived.get(HISTORY_LABEL) == mode and derived.get(SOURCE_LABEL) == source_id:
        return name
    log(f"{image}: deriving {name} (history {mode})")
    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-history-") as scratch:
        context = Path(scratch)
        (context / "clean-history.sh").write_text(CLEAN_SCRIPT)
        (context / "Dockerfile").write_text(history_dockerfile(image, mode, start if mode == "none" else "", source_id, repo_dir))
        docker_build(context, name, log)
    return name


async def ensure_clean_image(image: str, mode: str, start: str, repo_dir: str, pull: str, log: Callable[[str], None] = lambda message: None) -> str:
    """`clean_image` off the event loop, once per (image, mode) in this process (a warm reset costs no
    Docker call), and one derivation of a name at a time; `pull: always` asks the engine every time."""
    key = (image, mode, start, repo_dir)
    if pull != "always" and key in _clean_images:
        return _clean_images[key]
    async with machine_lock(f"derive {image} {mode}"):
        _clean_images[key] = await asyncio.to_thread(clean_image, image, mode, start, repo_dir, pull, log)
    return _clean_images[key]
