"""SWE-smith: synthetic bugs. A row's `patch` *creates* the bug in the repository of its profile (the
`swesmith` package's `registry.get_from_inst(row)`: one class per repository at one commit, owning its
test command, its log parser and its image), so the fix is that patch reversed.

SWE-smith's own harness (swesmith/harness/gather.py, utils.py) gives each instance a branch of the
repository's mirror: the bug committed, then its FAIL_TO_PASS test files removed; the agent starts there
and grading goes back to the bug commit (the tests return), applies the prediction, returns the
FAIL_TO_PASS and PASS_TO_PASS test files to that commit and runs `profile.get_test_cmd(row)`, read by
`profile.log_parser`, graded with swebench's F2P/P2P rules. Here the same start state is made from the
profile's commit without GitHub: `start_patch` (the bug) applied, `hidden_files` removed, as one root
commit (the start commit's parent would be the unbroken code, so no history is kept); the removed
files are the hidden tests, given back when grading.
"""

from __future__ import annotations

import re
from typing import Any

from uni_agent_gym.datasets.base import (
    FAIL_TO_PASS_GRADING, IMAGE_REPO_DIR, PYTHON, Family, InstanceError, Parser, check_diffs, require, row_id, list_of_tests,
)  # fmt: skip
from uni_agent_gym.datasets.task import Task
from uni_agent_gym.datasets import swesmith_profiles
from uni_agent_gym.diffs import reverse_diff

NAME = "swe-smith"
REQUIRED = ("instance_id", "repo", "patch", "problem_statement", "FAIL_TO_PASS", "PASS_TO_PASS")
_INSTANCE_ID = re.compile(r"^[^/\s]+__[^/\s]+\.[0-9a-f]{8}\.\S+$")


def recognise(row: dict[str, Any]) -> str | None:
    if "image_name" in row and _INSTANCE_ID.match(str(row.get("instance_id") or "")):
        return "an image_name column and an instance_id like owner__repo.commit8.name"
    if str(row.get("repo") or "").startswith("swesmith/"):
        return "repo swesmith/<owner>__<repo>.<commit8>"
    return None


def profile_of(row: dict[str, Any]) -> Any:
    """The swesmith repository profile of a row."""
    try:
        registry = swesmith_profiles.registry()
    except ImportError as exc:
        raise InstanceError(f"Instance {row_id(row)!r}: SWE-smith rows need the swesmith package (pip install swesmith): {exc}") from None
    try:
        return registry.get_from_inst(row)
    except KeyError:
        raise InstanceError(f"Instance {row_id(row)!r}: swesmith has no repository profile for {row.get('repo')!r} (field repo)") from None


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    instance_id = row_id(row)
    require(row, REQUIRED, may_be_empty=("PASS_TO_PASS",))
    task = dict(row)
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        task[name] = list_of_tests(instance_id, name, row[name])
    if not task["FAIL_TO_PASS"]:
        raise InstanceError(f"Instance {instance_id!r}: field FAIL_TO_PASS is empty (nothing could show a fix)")
    check_diffs(instance_id, row, ("patch",))
    profile = profile_of(row)
    try:
        f2p_files, p2p_files = profile.get_test_files(task)
        command, _ = profile.get_test_cmd(task)
    except Exception as exc:  # noqa: BLE001 - a profile is third-party code; say which row it failed on
        raise InstanceError(f"Instance {instance_id!r}: swesmith's profile {type(profile).__name__} cannot give its tests: {exc}") from None
    task.update(
        family=NAME, language=PYTHON, base_commit=profile.commit, image_name=profile.image_name, workdir=IMAGE_REPO_DIR, test_command=command, build_command=None,
        log_parser="swesmith", grading=FAIL_TO_PASS_GRADING, test_patch="", start_patch=row["patch"],
        hidden_files=sorted(set(f2p_files)), reset_files=sorted(set(f2p_files) | set(p2p_files)), history="none",
        environment={"unbuildable": f"swesmith's profile {type(profile).__name__} installs a conda environment from its GitHub mirror; "
                                    "give exact pins in an environments file"},  # fmt: skip
    )  # fmt: skip
    return task


def parser(task: Task) -> Parser:
    return profile_of(task.to_dict()).log_parser  # swesmith's registry reads the row


FAMILY = Family(
    name=NAME,
    recognise=recognise,
    normalise=normalise,
    parser=parser,
    gold=lambda task: reverse_diff(task.start_patch),  # the row's patch makes the bug: the fix undoes it
    columns="an image_name column and an instance_id owner__repo.commit8.name (repo swesmith/owner__repo.commit8)",
    images="the profile's image: swebench/swesmith.x86_64.<owner>_1776_<repo>.<commit8> (one per repository)",
    offline="the repository's image, with exact pins from an environments file (profiles install conda environments)",
)
