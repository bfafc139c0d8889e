"""Dataset rows of any family as verl training data: one parquet row per task, routed to UniAgentLoop.

verl's `RLHFDataset` reads `prompt` (chat messages; the env writes the real task prompt at reset, so
this is the problem statement, used by verl for length filtering and logs), and passes `agent_name`
and `extra_info` to the agent loop, which takes the task from `extra_info.instance` (JSON). The
family travels as `extra_info.family` and as `data_source`, so verl reports metrics per family. With a validations file
(`validate`'s report), each row carries its task's strength as `extra_info.strength` (`strength`, `survivors`, `tried`;
None where not measured), which the agent loops pass on to verl's metrics and a run can weight by, and
`by_strength` leaves out the tasks whose tests accept wrong fixes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from uni_agent_gym.datasets import Task
from uni_agent_gym.datasets.task import serialise
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.toolchains import PYTHON
from uni_agent_gym.workspaces.validations_file import ValidationsFile, task_validation


def verl_rows(tasks: list[Task], agent_name: str = "uni_agent", validations: ValidationsFile | None = None) -> list[dict[str, Any]]:
    """The rows verl's dataset expects, in the order given; each carries its task's serialised form (`task_format`)
    and its strength in `validations` (None: not measured, or no file)."""
    return [
        {
            "data_source": task.family,
            "agent_name": agent_name,
            "prompt": [{"role": "user", "content": task.problem_statement}],
            "ability": "software-engineering",
            "reward_model": {"style": "rule", "ground_truth": task.instance_id},
            "extra_info": {"index": index, "instance_id": task.instance_id, "family": task.family, "instance": serialise(task),
                           "strength": strength_of(task, validations)},  # fmt: skip
        }
        for index, task in enumerate(tasks)
    ]


def strength_of(task: Task, validations: ValidationsFile | None) -> dict[str, Any] | None:
    """The task's strength as a row carries it: {strength, survivors, tried}; None where `validations` has none."""
    found = task_validation(task, None, validations).strength_report() if validations is not None else None
    return None if found is None else {"strength": found["strength"], "survivors": found["survivors"], "tried": found["tried"]}


def by_strength(tasks: list[Task], validations: ValidationsFile, *, drop_survivors: bool = False,
                min_strength: float | None = None) -> tuple[list[Task], dict[str, list[str]]]:  # fmt: skip
    """(the tasks kept, the ids left out and those not measured): with `drop_survivors`, a task whose tests accepted a
    wrong variant of its gold is left out; with `min_strength`, one whose strength (killed / tried) is below it. A task
    whose strength was not measured is kept (nothing says its tests are weak) and named under "not measured"."""
    kept, said = [], {"survivors": [], "below": [], "not measured": []}
    for task in tasks:
        found = strength_of(task, validations)
        if found is None:
            said["not measured"].append(task.instance_id)
        elif drop_survivors and found["survivors"]:
            said["survivors"].append(task.instance_id)
            continue
        elif min_strength is not None and found["strength"] < min_strength:
            said["below"].append(task.instance_id)
            continue
        kept.append(task)
    return kept, said


def write_parquet(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Write `rows` with `datasets` (the library verl reads them back with), without its progress bar on stderr
    (a few rows' "Creating parquet from Arrow format" bar is noise in a command's output)."""
    from datasets import Dataset
    from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    shown = is_progress_bar_enabled()
    disable_progress_bar()
    try:
        Dataset.from_list(rows).to_parquet(str(path))
    finally:
        if shown:
            enable_progress_bar()
    return path


def agent_names(path: str | Path) -> set[str]:
    """The agent loops a parquet file's rows go to (its `agent_name` column; none without one)."""
    import pyarrow
    import pyarrow.parquet as pq

    try:
        if "agent_name" not in pq.read_schema(path).names:
            return set()
        column = pq.read_table(path, columns=["agent_name"]).column("agent_name")
    except (pyarrow.ArrowException, OSError) as exc:
        raise ConfigError(f"{path} is not a parquet file verl can read: {exc}") from None
    return {str(name) for name in column.to_pylist() if name is not None}


def row_languages(path: str | Path) -> Counter[str]:
    """How many rows of a parquet file are tasks of each language (their `extra_info.instance`); a task that
    needs no environment (the toy) is left out, as the deployments let it run anywhere."""
    import pyarrow
    import pyarrow.parquet as pq

    try:
        if "extra_info" not in pq.read_schema(path).names:
            return Counter()
        infos = pq.read_table(path, columns=["extra_info"]).column("extra_info").to_pylist()
    except (pyarrow.ArrowException, OSError) as exc:
        raise ConfigError(f"{path} is not a parquet file verl can read: {exc}") from None
    counts: Counter[str] = Counter()
    for info in infos:
        instance = (info or {}).get("instance") if isinstance(info, dict) else None
        try:
            task = json.loads(instance) if isinstance(instance, str) else instance
        except json.JSONDecodeError:
            continue  # not a row of ours: UniAgentLoop says so when it meets it
        if isinstance(task, dict) and task.get("needs_environment", True):  # a serialised task (a row): read as one
            counts[str(task.get("language") or PYTHON).lower()] += 1
    return counts
