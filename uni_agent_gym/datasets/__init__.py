"""Dataset families: which public dataset a row comes from, and the task it becomes.

    family, why = detect(row)              # the family that recognises the row, and the columns that decided
    task = normalise(row)                  # the checked task (see `base.py` for its keys)
    statuses = log_parser(task)(log)       # the family's parser of a test log

Families are tried in a fixed order (R2E-Gym, Multi-SWE-bench, SWE-smith, SWE-rebench, SWE-bench, SWE-Gym): the first
whose columns a row has decides, unless `dataset_format` names one. A task normalised before (it has a
`family`) keeps its family.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from uni_agent_gym.datasets import multi_swe_bench, r2e_gym, swe_gym, swe_rebench, swe_smith, swebench
from uni_agent_gym.datasets.base import Family, InstanceError, Parser, patch_files, row_id
from uni_agent_gym.datasets.task import Task, require_task

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (r2e_gym.FAMILY, multi_swe_bench.FAMILY, swe_smith.FAMILY, swe_rebench.FAMILY, swebench.FAMILY, swe_gym.FAMILY)
}
DATASET_FORMATS = ("auto", *FAMILIES)

__all__ = ["DATASET_FORMATS", "FAMILIES", "Family", "InstanceError", "Task", "detect", "gold_patch", "instance_id_of", "log_parser", "normalise", "patch_files", "require_task"]


def detect(row: dict[str, Any], dataset_format: str = "auto") -> tuple[Family, str]:
    """The family of a row and why (the columns that decided, or the format that was named)."""
    if dataset_format != "auto":
        if dataset_format not in FAMILIES:
            raise InstanceError(f"Expects a dataset format among {', '.join(DATASET_FORMATS)}, actual value: {dataset_format!r}")
        return FAMILIES[dataset_format], f"env.dataset_format is {dataset_format}"
    if row.get("family") in FAMILIES:
        return FAMILIES[row["family"]], f"a task already normalised as {row['family']}"
    for family in FAMILIES.values():
        reason = family.recognise(row)
        if reason:
            return family, reason
    shown = ", ".join(sorted(map(str, row))[:20])
    raise InstanceError(
        f"Instance {row_id(row)!r}: the row matches no dataset family (columns: {shown}); expects "
        + "; ".join(f"{family.name}: {family.columns}" for family in FAMILIES.values())
    )


def normalise(row: Mapping[str, Any], dataset_format: str = "auto") -> Task:
    """The task of a row: checked, with its family's test command, parser, grading rule, image and start state
    (a `Task` is one already: normalising is idempotent)."""
    if isinstance(row, Task):
        if dataset_format in ("auto", row.family):
            return row
        row = row.to_dict()  # normalised again as another family: from its row
    family, _ = detect(row, dataset_format)
    return Task.from_dict(family.normalise(dict(row)))


def instance_id_of(row: dict[str, Any]) -> str:
    """A row's instance id, also for families whose rows have none (R2E-Gym: repo and commit)."""
    if row.get("instance_id"):
        return str(row["instance_id"])
    if multi_swe_bench.recognise(row):
        return multi_swe_bench.instance_id_of(row)
    return r2e_gym.instance_id_of(row) if r2e_gym.recognise(row) else row_id(row)


def gold_patch(task: Task) -> str:
    """The task's reference fix: its `patch`, or what its family makes of it (SWE-smith's patch makes the bug)."""
    return FAMILIES[task.family].gold(task)


def log_parser(task: Task) -> Parser:
    """The parser of the task's test log (`log -> {test: status}`)."""
    return FAMILIES[task.family].parser(task)
