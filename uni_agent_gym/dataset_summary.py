"""`uni-agent-gym datasets`: the dataset families, and what a given file or dataset name holds.

For a dataset: its rows by family, repository and language, whether each row's image is on this
machine and holds the row's environment (as a sandbox opened on it checks: `workspaces/recorded_environment.py`; an
image that records nothing of itself, a pulled one, is counted by its name, and said to be), whether `images build`
can make it here (its environment known with exact pins, a base
image for its Python, a mirror of its repository) or, if not, why not, and how many rows' gradings plant
canaries (tests that must fail: `rewards/canaries.py`), under which runner. A row that does not make a task
(no spec for its repository and version, no harness for it, nothing to show a fix) is counted on its
family's line with the reason, so one such row does not hide what the rest of the file holds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import FAMILIES, InstanceError, Task, detect, normalise
from uni_agent_gym.errors import UniAgentGymError


@dataclass
class RepoLine:
    """The rows of one family and repository."""

    family: str
    repo: str
    language: str  # "?" where the family cannot tell
    rows: int = 0
    images_present: int | None = 0  # images here a sandbox of the row would take (None: no Docker engine to ask)
    images_unrecorded: int = 0  # of those, images that record no environment (pulled, or built before the labels)
    images_elsewhere: int = 0  # images under the rows' names built here for another environment: not counted
    buildable: int = 0
    reasons: Counter = field(default_factory=Counter)  # why rows cannot be built here, by reason
    canaries: Counter = field(default_factory=Counter)  # rows whose gradings plant canaries, by runner (None: none planted)


def family_table() -> list[dict[str, str]]:
    """Each family: how its rows are recognised, its images, what `images build` makes of it here."""
    return [{"family": f.name, "recognised by": f.columns, "images": f.images, "images build (offline)": f.offline} for f in FAMILIES.values()]


def summarise(rows: list[dict[str, Any]], config: GymConfig, environments: dict[str, dict[str, Any]], dataset_format: str = "auto") -> list[RepoLine]:
    """One line per (family, repository, language), in the order rows first appear."""
    from uni_agent_gym.workspaces.base_images import DEBIAN_SUITE_BY_PYTHON
    from uni_agent_gym.specs import environment_spec

    present = _image_checker()
    lines: dict[tuple[str, str, str], RepoLine] = {}
    for row in rows:
        try:
            task = normalise(row, dataset_format)
        except InstanceError as exc:  # the row is counted, with why it makes no task
            family, language = _family_and_language(row, dataset_format)
            key = (family, _repository(row), language)
            line = lines.setdefault(key, RepoLine(*key))
            line.rows += 1
            line.images_present = None if present is None else line.images_present
            line.reasons[_short(str(exc))] += 1
            continue
        key = (task.family, task.repo, task.language or "?")
        line = lines.setdefault(key, RepoLine(*key))
        line.rows += 1
        line.canaries[_canary_runner(task, environments)] += 1
        if present is None:
            line.images_present = None
        else:
            _count_image(line, task, present(task.image), environments)
        reason = None
        if task.hidden_paths:
            reason = "its tests exist only in its image"
        elif task.needs_environment is False:  # the toy task: the standard library alone
            reason = "needs no image: it runs on local, or on any image with python3"
        else:
            try:
                spec = environment_spec(task, environments)
                if spec.python not in DEBIAN_SUITE_BY_PYTHON:
                    reason = f"Python {spec.python} has no base image"
                elif not (config.env.mirrors.get(task.repo) or task.mirror):
                    reason = "no mirror of its repository (--mirror)"
            except UniAgentGymError as exc:
                reason = _short(str(exc))
        if reason is None:
            line.buildable += 1
        else:
            line.reasons[reason] += 1
    return list(lines.values())


def _count_image(line: RepoLine, task: Task, found: tuple[str, dict[str, str]] | None, environments: dict[str, dict[str, Any]]) -> None:
    """Count the row's image (`found`: its id and labels, None where there is none) as grading would take it."""
    from uni_agent_gym.datasets.base import IMAGE_REPO_DIR
    from uni_agent_gym.workspaces.recorded_environment import EnvironmentMismatch, recorded_digest, recorded_image

    if found is None:
        return
    if recorded_digest(task.image, found[1]) is None:
        line.images_unrecorded += 1
    else:
        try:
            recorded_image(task, task.image, found, environments, task.workdir or IMAGE_REPO_DIR)
        except EnvironmentMismatch:
            line.images_elsewhere += 1
            return
    line.images_present += 1


def images_cell(line: RepoLine) -> str:
    """How many of a line's rows have their image here (`3`), and how many of those are unlabelled or how many images
    are for another environment (`3 (1 unlabelled)`, `0 (2 for another environment)`); `?` without a Docker engine."""
    if line.images_present is None:
        return "?"
    notes = []
    if line.images_unrecorded:
        notes.append(f"{line.images_unrecorded} unlabelled")
    if line.images_elsewhere:
        notes.append(f"{line.images_elsewhere} for another environment")
    return f"{line.images_present} ({', '.join(notes)})" if notes else str(line.images_present)


def images_notes(lines: list[RepoLine]) -> list[str]:
    """What the "images here" column's words mean, for those it uses."""
    notes = []
    if any(line.images_present is None for line in lines):
        notes.append("images here: ? (no Docker engine answered)")
    if any(line.images_unrecorded for line in lines):
        notes.append("images here: unlabelled = an image not built here (pulled, or built before the labels): counted by its name; "
                     "nothing says which environment it holds")
    if any(line.images_elsewhere for line in lines):
        notes.append("images here: for another environment = built here for another commit, working directory or environment than "
                     "the row's, so a sandbox of the row refuses it: `images build --force` rebuilds it")
    return notes


def canaries_cell(line: RepoLine) -> str:
    """How many of a line's rows plant canaries, and under which runners (`17 karma`, `3 of 42 cargo`)."""
    planted = {runner: count for runner, count in line.canaries.items() if runner is not None}
    total = sum(planted.values())
    if not total:
        return "0"
    return f"{total}{'' if total == line.rows else f' of {line.rows}'} {', '.join(sorted(planted))}"


def _canary_runner(task: Task, environments: dict[str, dict[str, Any]]) -> str | None:
    from uni_agent_gym.rewards.swebench import canary_runner
    from uni_agent_gym.specs import command_of_tests

    try:
        runner = canary_runner(task, command_of_tests(task, environments))
    except UniAgentGymError:
        return None
    return None if runner is None else runner.name


def _repository(row: dict[str, Any]) -> str:
    """The repository of a row that makes no task: `org/repo` (Multi-SWE-bench), else `repo` or `repo_name`."""
    repo = str(row.get("repo") or row.get("repo_name") or "?")
    return f"{row['org']}/{repo}" if row.get("org") and "/" not in repo else repo


def _family_and_language(row: dict[str, Any], dataset_format: str) -> tuple[str, str]:
    """The family and language of a row that makes no task, "?" for what cannot be told."""
    try:
        family, _ = detect(row, dataset_format)
    except InstanceError:
        return "?", "?"
    return family.name, family.language(row) or "?"


def _image_checker():
    """`image_identity` (an image's id and labels, or None) when a Docker engine answers, else None."""
    from uni_agent_gym.deployments.docker import docker_client, image_identity
    from uni_agent_gym.errors import DeploymentError

    try:
        docker_client()
    except DeploymentError:
        return None
    return image_identity


def _short(message: str) -> str:
    """A reason without the instance's name, so rows with the same reason count together."""
    return message.split("': ", 1)[1] if message.startswith("Instance '") and "': " in message else message
