"""A validations file: the report `uni-agent-gym validate --output DIR` writes (DIR/validation.json), read where a run
reads its tasks, so that a verdict and a strength travel with the dataset instead of living in one machine's cache.

`eval` and `train` take it as `env.validations: PATH` (`--validations PATH`), the verl loops through their gym config,
`prepare-data` as `--validations PATH`. Each of its results is one row's (`row_digest`: what grading reads of it) on one
image (`image_id`; None where `validate` ran on no image built here: local, modal). A task's `TaskValidation` merges it
with this machine's store (`validated.py`):

- strength: the file's where it has one for the row, else the store's (for the task's environment on this machine);
- validated, for the zero rule and `env.validation: require` in a sandbox: this machine's verdict for the row on this
  image where it has one, else the file's for the row on the same image id (ids are content digests: an image pulled
  from a registry keeps its id). A record for the row on another image is reported as such, and does not count;
- validated, for choosing tasks where the image is not known here (`prepare-data` on a machine without the images, a
  local deployment): the file's verdict for the row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from uni_agent_gym.datasets import Task
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.files import check_file, read_text
from uni_agent_gym.workspaces.validated import environment_key, image_environment, read_store, row_digest

THIS_MACHINE = "this machine"
WHAT = "validations file"


@dataclass(frozen=True)
class TaskValidation:
    """What is known of one task's validation, and from where."""

    validated: bool | None = None  # the row's verdict (None: none known)
    source: str | None = None  # THIS_MACHINE or the validations file's path
    image: str = "unknown"  # the verdict's image against the task's: "same", "other" or "unknown" (one of them names none)
    verdict_image: str | None = None  # the image id the verdict is for
    strength: dict[str, Any] | None = None  # `validate`'s strength of the row (None: not measured)
    strength_source: str | None = None

    @property
    def environment_validated(self) -> bool:
        """Whether this very environment passed `validate` (the zero rule reads it): a verdict for another image, or
        for a row whose image is not known here, is not one."""
        return self.validated is True and self.image == "same"

    @property
    def survivors(self) -> int | None:
        """How many wrong variants of the gold patch the row's tests accepted (None: strength not measured)."""
        return survivors_of(self.strength)

    def report(self) -> dict[str, Any] | None:
        """The reward report's `validation` (None: nothing known of the row)."""
        if self.validated is None:
            return None
        shown = {"validated": self.validated, "from": self.source, "image": self.image}
        return shown if self.image != "other" else {**shown, "note": f"validated on another image ({self.verdict_image}), not this one"}

    def strength_report(self) -> dict[str, Any] | None:
        """The reward report's `strength`: `survivors: k of n`, the strength value and where it comes from."""
        if self.survivors is None:
            return None
        found = self.strength or {}
        return {"summary": f"survivors: {self.survivors} of {found['tried']}", "strength": found.get("strength"), "survivors": self.survivors,
                "tried": found["tried"], "from": self.strength_source}  # fmt: skip


def survivors_of(strength: dict[str, Any] | None) -> int | None:
    """The number of survivors of a strength record; None where nothing was graded (not measured, no variant, an error)."""
    if not isinstance(strength, dict) or not strength.get("tried") or not isinstance(strength.get("survivors"), list):
        return None
    return len(strength["survivors"])


class ValidationsFile:
    """The results of one validation.json by row digest (a row listed twice: its last result)."""

    def __init__(self, path: str | Path, results: list[dict[str, Any]]) -> None:
        self.path = str(path)
        self.by_row = {result["row_digest"]: result for result in results}

    def record_of(self, task: Task) -> dict[str, Any] | None:
        return self.by_row.get(row_digest(task))

    def summary(self) -> str:
        """How many rows it holds, validated, measured and with survivors (a command says it once)."""
        results = list(self.by_row.values())
        measured = [survivors_of(result.get("strength")) for result in results]
        return (f"{len(results)} row(s), {sum(bool(result.get('validated')) for result in results)} validated, "
                f"{sum(count is not None for count in measured)} with strength measured, {sum(bool(count) for count in measured)} with survivors")  # fmt: skip


def load(path: str | Path) -> ValidationsFile:
    """The validations file at `path` (read once per version of it: a grading asks it per task); a file that is not
    `validate`'s report is a `ConfigError` that says what to give."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ConfigError(f"{WHAT} {path} does not exist: write one with `uni-agent-gym validate --output DIR` (DIR/validation.json)")
    stat = check_file(path, WHAT, ConfigError).stat()
    return _load(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int) -> ValidationsFile:
    try:
        data = json.loads(read_text(path, WHAT, ConfigError))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{WHAT} {path} is not valid JSON ({exc}): give the validation.json that `uni-agent-gym validate --output DIR` wrote") from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list) or not all(isinstance(result, dict) and result.get("instance_id") for result in results):
        raise ConfigError(f"{WHAT} {path} is not a report of `uni-agent-gym validate` (no `results` list of tasks): give the "
                          "validation.json that `validate --output DIR` wrote")  # fmt: skip
    undigested = [result["instance_id"] for result in results if not result.get("row_digest")]
    if undigested:
        raise ConfigError(f"{WHAT} {path}: {len(undigested)} result(s) carry no row digest ({', '.join(undigested[:5])}), written "
                          "by an older uni-agent-gym: run `uni-agent-gym validate` again for them")  # fmt: skip
    return ValidationsFile(path, results)


def task_validation(task: Task, cache_dir: str | Path | None, validations: ValidationsFile | None,
                    environment: str | None = None, image_id: str | None = None) -> TaskValidation:  # fmt: skip
    """What this machine's store (under `cache_dir`; None: not read) and the validations file know of `task` on the image
    of `environment` and `image_id` (None: not known here), merged as the module says."""
    stored = read_store(cache_dir).get(environment_key(row_digest(task), environment, image_id)) if cache_dir and environment and image_id else None
    found = validations.record_of(task) if validations is not None else None
    if found is not None and found.get("strength") and survivors_of(found["strength"]) is not None:
        strength, strength_source = found["strength"], validations.path
    elif stored is not None and survivors_of(stored.get("strength")) is not None:
        strength, strength_source = stored["strength"], THIS_MACHINE
    else:
        strength = strength_source = None
    if stored is not None:
        return TaskValidation(bool(stored.get("validated")), THIS_MACHINE, "same", image_id, strength, strength_source)
    if found is None:
        return TaskValidation(strength=strength, strength_source=strength_source)
    theirs = found.get("image_id")
    image = "unknown" if not (image_id and theirs) else "same" if theirs == image_id else "other"
    return TaskValidation(bool(found.get("validated")), validations.path, image, theirs, strength, strength_source)


def unvalidated(tasks: list[Task], cache_dir: str | Path, validations: ValidationsFile, *, images: bool = True) -> list[str]:
    """The ids of the tasks that have not validated, this machine's store and the file merged: where this machine holds
    the task's image, its environment must have passed (here, or in the file on the same image id); where it does not
    (or `images` is off: a deployment that runs on none), the file's verdict for the row counts. The toy, which needs no
    environment, is never among them."""
    missing = []
    for task in tasks:
        if task.needs_environment is False:
            continue
        environment = image_environment(task.image) if images else None
        found = task_validation(task, cache_dir, validations, *(environment or (None, None)))
        if not (found.environment_validated if environment else found.validated):
            missing.append(task.instance_id)
    return missing
