"""Which rows passed `uni-agent-gym validate` in which environment, remembered on this machine.

A verdict belongs to a row in an environment: the row as grading reads it (`row_digest`: its graded tests, test patch,
gold, commands, parser, grading rule and start state; a broken copy of a row, say another FAIL_TO_PASS, is another
row) on an instance image built here (its `recorded_environment` digest) as the engine holds it (its image id: a
rebuild of the same recipe is another environment until validated again). The record is one JSON file under the
cache directory, `validated.json`: `{"<row digest>@<environment digest>@<image id>": {"instance_id", "validated",
"reasons", "strength", "when"}}`; records of an older gym (`<digest>@<image id>`) count for nothing, so such rows are
validated again. Grading reads it to decide whose a run that never started is (`rewards/swebench.py`, the zero rule);
`uni-agent-gym validate` writes it; `eval` and `prepare-data` consult it (`consult`: `validation: warn | skip |
require`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uni_agent_gym.datasets import Task
from uni_agent_gym.errors import DeploymentError, UniAgentGymError
from uni_agent_gym.named_locks import blocking_machine_lock
from uni_agent_gym.workspaces.recorded_environment import recorded_digest

STORE_NAME = "validated.json"


def store_path(cache_dir: str | Path) -> Path:
    return Path(cache_dir).expanduser() / STORE_NAME


# What grading reads of a row: a verdict is about these, so a row that differs in one of them is another row
GRADED_FIELDS = ("instance_id", "repo", "base_commit", "version", "language", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS",
                 "expected_output", "grading", "eval_type", "log_parser", "workdir", "test_command", "build_command", "environment",
                 "start_patch", "hidden_files", "reset_files", "hidden_paths", "protected_paths", "history")  # fmt: skip
# and the columns of the families' rows that grading reads beside them (SWE-rebench's recipe, swebench 5.x's own steps)
GRADED_COLUMNS = ("FAIL_TO_FAIL", "PASS_TO_FAIL", "install_config", "eval_script", "image")


def row_digest(task: Task) -> str:
    """A digest of what grading reads of the row (`GRADED_FIELDS`, `GRADED_COLUMNS`): commands that are defaults
    (swebench's spec for the repository and version, or what the image records, which its environment digest covers)
    and the test patch of a task whose start state makes one (SWE-smith's hidden tests) are left out, being the
    sandbox's (its `Episode`'s), not the row's. (Commands left to the defaults are none at first: a Python row's, whose
    image then records them, as `recorded_environment.explicit_environment` reads a row.)"""
    own_commands = task.commands_from is None and (bool(task.test_command) or task.build_command is not None)
    derived = set() if own_commands else {"test_command", "build_command"}
    derived |= {"test_patch"} if task.start_patch else set()
    graded = {name: getattr(task, name) for name in GRADED_FIELDS if name not in derived}
    graded.update({name: task.columns.get(name) for name in GRADED_COLUMNS if task.columns.get(name) is not None})
    return hashlib.sha256(json.dumps(graded, sort_keys=True, default=str).encode()).hexdigest()[:16]


def environment_key(row: str, digest: str, image_id: str) -> str:
    return f"{row}@{digest}@{image_id}"


def read_store(cache_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Every record ({} where there is none, or the file is not a JSON object: nothing counts as validated)."""
    try:
        data = json.loads(store_path(cache_dir).read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def is_validated(cache_dir: str | Path, task: Task, digest: str | None, image_id: str | None) -> bool:
    """Whether this row passed `validate` in this environment (False for one not built here: it records no digest)."""
    return bool(digest and image_id) and _passed(read_store(cache_dir), row_digest(task), digest, image_id)


def validation_of(cache_dir: str | Path, task: Task, digest: str | None, image_id: str | None) -> dict[str, Any] | None:
    """This row's record in this environment (`validated`, `reasons`, `strength`), or None."""
    if not (digest and image_id):
        return None
    return read_store(cache_dir).get(environment_key(row_digest(task), digest, image_id))


def _passed(store: dict[str, dict[str, Any]], row: str, digest: str, image_id: str) -> bool:
    return bool(store.get(environment_key(row, digest, image_id), {}).get("validated"))


def record(cache_dir: str | Path, task: Task, digest: str, image_id: str, validated: bool, reasons: list[str],
           strength: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Remember one row's result in one environment (replacing an earlier one), atomically, one writer at a time."""
    path = store_path(cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with blocking_machine_lock(f"validation store {path.resolve()}"):
        data = read_store(cache_dir)
        data[environment_key(row_digest(task), digest, image_id)] = {
            "instance_id": task.instance_id, "validated": validated, "reasons": reasons, "strength": strength, "when": time.time()}
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(data, indent=1, sort_keys=True))
        scratch.replace(path)


class NothingValidated(UniAgentGymError):
    """`validation: require` left no task to run."""


def image_environment(image: str) -> tuple[str, str] | None:
    """(environment digest, image id) of `image` on this machine's engine; None where unknown (no engine answers, no
    such image, or one not built here: it records no environment)."""
    from uni_agent_gym.deployments.docker import image_identity

    try:
        found = image_identity(image)
    except DeploymentError:
        return None
    digest = None if found is None else recorded_digest(image, found[1])
    return None if digest is None else (digest, found[0])


def unvalidated(tasks: list[Task], cache_dir: str | Path) -> list[str]:
    """The ids of the tasks whose image has not passed `validate` on this machine (the toy, which needs no
    environment, is never among them)."""
    store = read_store(cache_dir)
    missing = []
    for task in tasks:
        if task.needs_environment is False:
            continue
        environment = image_environment(task.image)
        if environment is None or not _passed(store, row_digest(task), *environment):
            missing.append(task.instance_id)
    return missing


def consult(tasks: list[Task], mode: str, cache_dir: str | Path, say: Callable[[str], None], *,
            find_missing: Callable[[list[Task]], list[str]] | None = None, where: str = "on this machine") -> list[Task]:  # fmt: skip
    """The tasks a run takes under `validation: mode`: `skip` all, unchecked; `warn` all, naming those not validated
    once; `require` only the validated ones, naming each one left out once (`NothingValidated` when none is).
    `find_missing` gives the ids not validated (this machine's store's by default; with a validations file, the merge of
    `validations_file.unvalidated`), `where` says where they were looked for."""
    if mode == "skip":
        return tasks
    missing = find_missing(tasks) if find_missing else unvalidated(tasks, cache_dir)
    if not missing:
        return tasks
    if mode == "warn":
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        say(f"{len(missing)} of {len(tasks)} task(s) not validated {where} ({shown}): a zero there may be its environment's; "
            "run `uni-agent-gym validate` (or validation: require to run only validated tasks)")
        return tasks
    left_out = set(missing)
    kept = [task for task in tasks if task.instance_id not in left_out]
    if not kept:
        raise NothingValidated(f"validation: require, and none of the {len(tasks)} task(s) has validated {where}: run `uni-agent-gym validate` first")
    say(f"validation: require: {len(missing)} task(s) left out, not validated {where}: {', '.join(missing)}")
    return kept
