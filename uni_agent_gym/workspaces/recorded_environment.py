"""The environment an instance image records: what it was built from, so that grading on it cannot use another.

`images build` labels every instance image with the digest of the task's environment (the spec: toolchain or
Python and packages, install, build and test commands, variables; the repository, its commit and working
directory), with that directory, and with the commands grading needs (the test command and the build run after the
patches). A sandbox opened on such an image is checked against its task before anything runs in it:

- an image of another commit (a rebuild under the same name, a re-based row) is refused;
- an image that keeps the repository in another directory than the task's `workdir` (a row that lost its `workdir`,
  graded on an image built from one that had it) is refused, naming both directories;
- a task whose environment is given explicitly (an environments-file entry, a recipe or command the row
  carries) must have the image's digest, else the image is refused naming both;
- a task that gives none (only swebench's spec defaults, or no spec at all: a version swebench lacks) takes the
  commands the image records: the image was built from an environment that overrode the defaults, and grading
  with the defaults would test what the build never made (the old binary, a test filter that matches nothing).

A refusal is an `EnvironmentMismatch` (a `DeploymentError`: the infrastructure's, masked in training, never a reward). Images without the labels (official
ones, pulled; built before them), and images made from one built here under another name (which inherit its
labels), are not checked: nothing says what they hold. What a checked image records (its digest, id and the commands
grading takes from it) is the sandbox's `Episode`'s (`RecordedImage`), never written into the task.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from uni_agent_gym.datasets import Task
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.specs import Commands, EnvironmentSpec, SpecError, environment_spec
from uni_agent_gym.workspaces.host_git import WorkspaceError

DIGEST_LABEL = "uni-agent-gym.task-environment"
COMMIT_LABEL = "uni-agent-gym.base-commit"
WORKDIR_LABEL = "uni-agent-gym.workdir"  # where the image keeps the repository (the task's `workdir` when it was built)
TEST_LABEL = "uni-agent-gym.test-command"
BUILD_LABEL = "uni-agent-gym.build-command"
NAME_LABEL = "uni-agent-gym.image"  # the name it was built under: an image made FROM it (or tagged anew) inherits the
# labels, and holds something else (another family's image of the same repository, say): only this name is checked


@dataclass(frozen=True)
class RecordedImage:
    """What an instance image built here records of itself, checked against its task (`recorded_image`)."""

    environment: str  # the digest of the environment it was built from
    image_id: str  # the engine's id of it
    commands: Commands | None = None  # the commands grading runs, where the task leaves them to the defaults


class EnvironmentUnavailable(WorkspaceError, DeploymentError):
    """The task's environment cannot be had in this sandbox: an infrastructure fault (masked in training, an `infra_error`
    when grading), never a sandbox without it."""


class EnvironmentMismatch(EnvironmentUnavailable):
    """An image was built for another environment than its task's: grading on it would reward the wrong thing."""


def environment_digest(spec: EnvironmentSpec, instance: Task, workdir: str) -> str:
    """What a task's environment is, as a short digest: the spec (not where it came from) and the repository state."""
    fields = {key: value for key, value in dataclasses.asdict(spec).items() if key != "source"}
    identity = [instance.repo, instance.base_commit, workdir]
    return hashlib.sha256(json.dumps([fields, identity], sort_keys=True).encode()).hexdigest()[:16]


def environment_labels(spec: EnvironmentSpec, instance: Task, workdir: str, image: str) -> dict[str, str]:
    """The labels an instance image built from `spec` under the name `image` carries."""
    return {DIGEST_LABEL: environment_digest(spec, instance, workdir), COMMIT_LABEL: instance.base_commit, WORKDIR_LABEL: workdir,
            TEST_LABEL: spec.test_command, BUILD_LABEL: spec.build, NAME_LABEL: canonical_name(image)}  # fmt: skip


def canonical_name(image: str) -> str:
    """`repository:tag`, with docker's `latest` where no tag is written."""
    from docker.utils import parse_repository_tag

    repository, tag = parse_repository_tag(image)
    return f"{repository}@{tag}" if tag and tag.startswith("sha256:") else f"{repository}:{tag or 'latest'}"


def recorded_digest(image: str, labels: dict[str, str]) -> str | None:
    """The environment digest `image` records of itself; None for an image not built here under this name (pulled, built
    before the labels, or made FROM one built here: it inherits the labels and holds something else)."""
    return labels.get(DIGEST_LABEL) if labels.get(NAME_LABEL) == canonical_name(image) else None


def explicit_environment(instance: Task, environments: dict[str, dict[str, Any]]) -> bool:
    """Whether the task says its environment itself (an environments entry, the row's recipe or commands), rather than
    leaving it to swebench's spec defaults."""
    own_commands = instance.commands_from is None and (bool(instance.test_command) or instance.build_command is not None)
    return instance.instance_id in environments or instance.environment is not None or own_commands


def recorded_image(
    instance: Task, image: str, found: tuple[str, dict[str, str]] | None, environments: dict[str, dict[str, Any]], workdir: str
) -> RecordedImage | None:
    """What `image` (`found`: its id and labels, None where unknown) records for grading the task on it: its digest and
    id, and the commands it records where the task gives none; None for an image that records nothing (not built here
    under this name); `EnvironmentMismatch` when it was built for another environment (module docstring)."""
    image_id, labels = found or ("", {})
    recorded = recorded_digest(image, labels)
    if recorded is None:
        return None
    instance_id = instance.instance_id
    commit = labels.get(COMMIT_LABEL)
    if commit != instance.base_commit:
        try:
            wanted = environment_digest(environment_spec(instance, environments), instance, workdir)
        except SpecError:
            wanted = "unknown"
        raise EnvironmentMismatch(
            f"Instance {instance_id!r}: its image {image} holds the repository at {commit} (environment {recorded}), the task at "
            f"{instance.base_commit} (environment {wanted}): rebuild it (`uni-agent-gym images build --force`) or use the row it was built for"
        )
    built_in = labels.get(WORKDIR_LABEL)  # None: labelled before the working directory was (nothing to compare)
    if built_in is not None and built_in != workdir:
        raise EnvironmentMismatch(
            f"Instance {instance_id!r}: its image {image} keeps the repository in {built_in}, the task looks for it in {workdir}: "
            f"give the row `workdir: {built_in}` (as the row it was built from does), or rebuild the image for this row "
            "(`uni-agent-gym images build --force`)"
        )
    if not explicit_environment(instance, environments):
        return RecordedImage(recorded, image_id, Commands(labels.get(TEST_LABEL) or None, labels.get(BUILD_LABEL, "")))
    try:
        spec = environment_spec(instance, environments)
    except SpecError as exc:
        raise EnvironmentMismatch(f"Instance {instance_id!r}: its image {image} was built for environment {recorded}, and the task's cannot be made: {exc}") from None
    wanted = environment_digest(spec, instance, workdir)
    if wanted != recorded:
        differs = [f"{what} {mine!r} (image: {labels.get(label)!r})" for what, mine, label in
                   (("test command", spec.test_command, TEST_LABEL), ("build", spec.build, BUILD_LABEL)) if mine != labels.get(label)]  # fmt: skip
        detail = f"; the task's {', '.join(differs)}" if differs else " (its toolchain, packages or install differ)"
        raise EnvironmentMismatch(
            f"Instance {instance_id!r}: its image {image} was built for environment {recorded}, the task's is {wanted}{detail}: "
            "grade with the environments file the image was built with, or rebuild it (`uni-agent-gym images build --force`)"
        )
    return RecordedImage(recorded, image_id)
