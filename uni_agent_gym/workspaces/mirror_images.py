"""Mirror workspaces on docker and ray run an image of their own: the deployment's image with the clean checkout
of the start commit at the repository's directory, built once per (image, start commit, directory).

Why not copy the checkout into each new container, as modal and local do: the reward reads what the agent did
from the container's own filesystem layer (the daemon's diff, `rewards/capture.py`). A repository copied in at
start is all in that layer: every file reads as added, a deleted one as never there, so the "changes" are the
whole repository (past `reward.max_patch_bytes` for any real one: every reward 0) and a deletion is lost. With the
checkout in the image's layers, the container's own layer holds exactly the agent's work, as in an instance
image. Each reset also saves the copy.

Where it is built is the site's (`deployments/sites.py`): this machine's engine on docker; on ray a sandbox node
(a Ray task; the driver may have no Docker engine), from a tar of the checkout sent with the task, then pushed to
the registry the other nodes pull from.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
import tarfile
import tempfile
from pathlib import Path

from uni_agent_gym.deployments.docker import docker_client, ensure_image, image_labels
from uni_agent_gym.deployments.sites import Derived, Site
from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.workspaces.history import CleanHistory, fresh_checkout
from uni_agent_gym.workspaces.host_git import WorkspaceError

WORKSPACE_LABEL = "uni-agent-gym.workspace"  # on a workspace image: the image, start commit and directory it was made of
_made: dict[tuple, str] = {}  # what was built or found, in this process


def workspace_image_name(image: str, repo: str, start: str, repo_dir: str) -> str:
    """`uni-agent-gym/workspace:<repo>-<start>-<digest of image and directory>`, a valid tag."""
    digest = hashlib.sha256(f"{image}\n{repo_dir}".encode()).hexdigest()[:12]
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", repo)[:60].strip("._-") or "repo"
    return f"uni-agent-gym/workspace:{readable}-{start[:12]}-{digest}"


async def ensure_workspace_image(image: str, repo: str, history: CleanHistory, repo_dir: str, site: Site) -> Derived:
    """The workspace image of `image` with `history`'s start checked out at `repo_dir`, made where `site` keeps its
    images (on ray: on a node, then pushed to the registry) where missing, and how a sandbox gets it."""
    name = workspace_image_name(image, repo, history.start, repo_dir)
    key = (name, site.where)
    if key in _made and not site.asks_each_time:
        return _made[key]
    async with machine_lock(f"workspace image {name}"):
        if key not in _made or site.asks_each_time:
            archive = await _checkout_archive(history)
            _made[key] = await site.derive(_build, image, name, archive, repo_dir, history.start)
    return _made[key]


async def _build(image: str, pull: str, name: str, archive: bytes, repo_dir: str, start: str) -> str:
    """`build_workspace_image` as a site's job (`Site.derive`): run on the engine beside it."""
    await asyncio.to_thread(build_workspace_image, image, name, archive, repo_dir, start, pull)
    return name


async def _checkout_archive(history: CleanHistory) -> bytes:
    """A tar of a fresh checkout of the start commit (its `.git` holding only the clean history), as `repo/`."""
    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-checkout-") as scratch:
        checkout = Path(scratch) / "repo"
        await fresh_checkout(history.git_dir, history.start, checkout)

        def pack() -> bytes:
            out = io.BytesIO()
            with tarfile.open(fileobj=out, mode="w") as tar:
                tar.add(checkout, arcname="repo")
            return out.getvalue()

        return await asyncio.to_thread(pack)


def build_workspace_image(image: str, name: str, archive: bytes, repo_dir: str, start: str, pull: str) -> None:
    """Build `name` from `image` plus the checkout in `archive` at `repo_dir`, unless an image of that name made
    from the same image id exists (blocking)."""
    ensure_image(image, pull)
    source = docker_client().images.get(image).id
    if (image_labels(name) or {}).get(WORKSPACE_LABEL, "").startswith(source):
        return
    dockerfile = f'FROM {image}\nCOPY repo/ {repo_dir}/\nLABEL {WORKSPACE_LABEL}="{source} {start} {repo_dir}"\n'
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        with tarfile.open(fileobj=io.BytesIO(archive)) as checkout:
            for member in checkout.getmembers():
                tar.addfile(member, checkout.extractfile(member) if member.isreg() else None)
        data = dockerfile.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    last: list[str] = []
    stream = docker_client().api.build(fileobj=context, custom_context=True, tag=name, network_mode="none", rm=True, forcerm=True, decode=True)
    for chunk in stream:
        if "error" in chunk:
            raise WorkspaceError(f"docker build of the workspace image {name} failed: {chunk['error'].strip()}\n{''.join(last)[-2000:]}")
        last = (last + [chunk.get("stream", "")])[-40:]
