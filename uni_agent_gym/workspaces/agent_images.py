"""The image an agent's sandbox runs for a task opened on its own image: made clean (nothing past its start commit,
`history_images.py`) and, for a task whose tests are hidden from the agent, without them (`hidden_images.py`).

It is derived where the deployment's site keeps its images (`deployments/sites.py`): by this machine's engine on
docker; on ray by one Ray task on a sandbox node, which pulls the image from the registry, derives it and pushes
what it derived once, so every other node pulls it from there (the driver may have no Docker engine). The answer
is remembered per process.
"""

from __future__ import annotations

from uni_agent_gym.deployments.sites import Derived, Site

_made: dict[tuple, Derived] = {}  # what the site answered, in this process


async def agent_image(site: Site, image: str, mode: str, start: str, repo_dir: str, hidden_paths: list[str] | None) -> Derived:
    """The image the agent's sandbox runs for `image` under `env.history: mode` (the image itself where nothing is
    to be derived), how the sandbox gets it, and the id and labels of `image` (what it records of its environment)."""
    key = (image, mode, start, repo_dir, tuple(sorted(hidden_paths or ())), site.where)
    if site.asks_each_time or key not in _made:
        _made[key] = await site.derive(derive_agent_image, image, mode, start, repo_dir, hidden_paths, identify=True)
    return _made[key]


async def derive_agent_image(image: str, pull: str, mode: str, start: str, repo_dir: str, hidden_paths: list[str] | None) -> str:
    """The clean image of `image`, without `hidden_paths` where there are any, made on the engine this runs beside
    (a site's job, `Site.derive`)."""
    from uni_agent_gym.workspaces.hidden_images import image_without  # the docker SDK, only where images are derived
    from uni_agent_gym.workspaces.history_images import ensure_clean_image

    name = await ensure_clean_image(image, mode, start, repo_dir, pull)
    if hidden_paths:
        name = await image_without(name, hidden_paths)
    return name
