"""`uni-agent-gym datasets`: the dataset families, and what a given file or dataset name holds.

For a dataset: its rows by family and repository, whether each row's image is on this machine, and
whether `images build` can make it here (its environment known with exact pins, a base image for its
Python, a mirror of its repository) or, if not, why not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import FAMILIES
from uni_agent_gym.errors import UniAgentGymError


@dataclass
class RepoLine:
    """The rows of one family and repository."""

    family: str
    repo: str
    rows: int = 0
    images_present: int | None = 0  # None: no Docker engine to ask
    buildable: int = 0
    reasons: Counter = field(default_factory=Counter)  # why rows cannot be built here, by reason


def family_table() -> list[dict[str, str]]:
    """Each family: how its rows are recognised, its images, what `images build` makes of it here."""
    return [{"family": f.name, "recognised by": f.columns, "images": f.images, "images build (offline)": f.offline} for f in FAMILIES.values()]


def summarise(tasks: list[dict[str, Any]], config: GymConfig, environments: dict[str, dict[str, Any]]) -> list[RepoLine]:
    """One line per (family, repository), in the order rows first appear."""
    from uni_agent_gym.workspaces.base_images import DEBIAN_SUITE_BY_PYTHON
    from uni_agent_gym.specs import environment_spec

    present = _image_checker()
    lines: dict[tuple[str, str], RepoLine] = {}
    for task in tasks:
        line = lines.setdefault((task["family"], task["repo"]), RepoLine(task["family"], task["repo"]))
        line.rows += 1
        if present is None:
            line.images_present = None
        elif present(task["image_name"]):
            line.images_present += 1
        reason = None
        if task.get("hidden_paths"):
            reason = "its tests exist only in its image"
        else:
            try:
                spec = environment_spec(task, environments)
                if spec.python not in DEBIAN_SUITE_BY_PYTHON:
                    reason = f"Python {spec.python} has no base image"
                elif not (config.env.mirrors.get(task["repo"]) or task.get("mirror")):
                    reason = "no mirror of its repository (--mirror)"
            except UniAgentGymError as exc:
                reason = _short(str(exc))
        if reason is None:
            line.buildable += 1
        else:
            line.reasons[reason] += 1
    return list(lines.values())


def _image_checker():
    """`image_exists` when a Docker engine answers, else None."""
    from uni_agent_gym.deployments.docker import docker_client, image_exists
    from uni_agent_gym.errors import DeploymentError

    try:
        docker_client()
    except DeploymentError:
        return None
    return image_exists


def _short(message: str) -> str:
    """A reason without the instance's name, so rows with the same reason count together."""
    return message.split("': ", 1)[1] if message.startswith("Instance '") and "': " in message else message
