"""The task: the one object every layer reads (env, workspaces, rewards, `grade`, `eval`, `prepare-data`, the loops).

    task = normalise(row)                          # a `Task`, made only by a family's normaliser
    task.instance_id, task.image_name, task.test_command, task.columns["hints_text"]
    task.replace(test_command="...")               # a changed copy (a task is frozen), for the families and tests
    task.to_dict()                                 # the row shape, for code that reads rows (swesmith, multi-swe-bench)
    serialise(task) / deserialise(text)            # its JSON form, with `task_format` (verl's parquet carries it)

A `Task` is a frozen dataclass: its fields are the keys every family fills in (documented in `base.py`), and only
those: it is the dataset's data, made once where rows come in and never rewritten while it runs. What a run has (its
sandbox, the commit it started from, the test patch its start state made, the image and what that records) is the
`Episode`'s (`workspaces/episode.py`). Every other column of
the row (`hints_text`, SWE-rebench's `install_config`, Multi-SWE-bench's harness fields) is kept, unchanged,
in `columns`: third-party code (swesmith's profiles, multi-swe-bench's harness) reads the row as the dataset
wrote it, from `to_dict()`.

A task is still a read-only `Mapping` of its fields and columns (`task["FAIL_TO_PASS"]`, `task.get("hints_text")`,
`dict(task)`) for one release, each read warning `DeprecationWarning`: the Mapping face goes in the next one. Code of
this package reads attributes and `columns`, and its tests make that warning an error.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from uni_agent_gym.datasets.base import IMAGE_REPO_DIR, InstanceError, swebench_image_name

TASK_FORMAT = 2  # the version of `serialise`'s form; raise it when a field comes, goes or changes meaning
# Format 1 carried what a run had set on the task; it is the run's now (the `Episode`), and `deserialise` drops it.
RUN_FIELDS_OF_FORMAT_1 = ("environment_commit", "image_environment", "image_id")
MAPPING_DEPRECATED = ("reading a Task as a Mapping (task[...], .get, iteration, dict(task)) is deprecated and goes in the next "
                      "release: read its attributes (task.instance_id), task.columns for the row's other columns, or "
                      "task.to_dict() for the row as the dataset wrote it")  # fmt: skip


@dataclass(frozen=True, eq=False)
class Task(Mapping[str, Any]):
    """A checked task (see `datasets/base.py` for what each field means). Read it by attribute; its Mapping face
    (`task["..."]`, `.get`) still works for one release and warns `DeprecationWarning` (`to_dict()`: the row)."""

    # identity
    instance_id: str
    repo: str
    family: str
    base_commit: str | None = None
    language: str = "python"
    version: str | None = None
    # the problem and its patches
    problem_statement: str = ""
    patch: str = ""  # the reference fix as the row gives it (`datasets.gold_patch` is the fix to grade)
    test_patch: str = ""
    # what grading reads
    FAIL_TO_PASS: list[str] = field(default_factory=list)
    PASS_TO_PASS: list[str] = field(default_factory=list)
    expected_output: dict[str, str] | None = None  # R2E-Gym's graded statuses (grading `expected-output`)
    grading: str = "fail-to-pass"
    eval_type: str = "pass_and_fail"  # swebench's EvalType: `fail_only` grades a test failed only where its log says so
    log_parser: str | None = None
    # its environment
    image_name: str = ""
    workdir: str | None = IMAGE_REPO_DIR  # None: the image's own WORKDIR (SWE-rebench-V2)
    test_command: str | None = None
    build_command: str | None = None
    commands_from: str | None = None  # None: the row's own; `swebench-spec` (its spec's defaults)
    environment: dict[str, Any] | None = None  # a recipe the row carries (environments-file shape), or why none builds
    needs_environment: bool = True  # False: any image with the base tools runs it (the toy)
    mirror: str | None = None  # a git repository of `repo` the task names itself (the toy)
    # its start state
    start_patch: str | None = None
    hidden_files: list[str] = field(default_factory=list)
    reset_files: list[str] = field(default_factory=list)
    hidden_paths: list[str] = field(default_factory=list)
    protected_paths: list[str] = field(default_factory=list)
    history: str | None = None  # a family's own history mode (SWE-smith: `none`)
    # every other column of the row, as the dataset wrote it
    columns: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Task:
        """A task from its dict form (a normaliser's output, `to_dict`'s, or `serialise`'s without the format)."""
        if isinstance(data, Task):
            return data
        known = {name: data[name] for name in FIELDS if name in data and name != "columns"}
        missing = [name for name in REQUIRED if known.get(name) is None]
        if missing:
            raise InstanceError(f"Instance {data.get('instance_id', '<no instance_id>')!r}: not a task, missing {', '.join(missing)}")
        return cls(**known, columns={name: value for name, value in data.items() if name not in FIELDS and name != "task_format"})

    @property
    def image(self) -> str:
        """The image the task runs in: its family's, else SWE-bench's official name for its id (the toy's rows name none)."""
        return self.image_name or swebench_image_name(self.instance_id)

    def to_dict(self) -> dict[str, Any]:
        """The task as one flat dict: its fields, then its row's other columns (the row shape)."""
        return {**{name: getattr(self, name) for name in FIELD_ORDER}, **{name: value for name, value in self.columns.items() if name not in FIELDS}}

    def replace(self, **changes: Any) -> Task:
        """A copy with `changes` (fields, or columns for any other name)."""
        columns = {name: changes.pop(name) for name in list(changes) if name not in FIELDS}
        return dataclasses.replace(self, **changes, columns={**self.columns, **columns}) if columns else dataclasses.replace(self, **changes)

    # The deprecated Mapping face (`MAPPING_DEPRECATED`): every read through it (`get`, `in`, `keys`, `dict(task)`
    # included) passes one of these three.
    def __getitem__(self, key: str) -> Any:
        _mapping_read()
        if key in FIELDS and key != "columns":
            return getattr(self, key)
        return self.columns[key]

    def __iter__(self) -> Iterator[str]:
        _mapping_read()
        return iter(self.to_dict())

    def __len__(self) -> int:
        _mapping_read()
        return len(self.to_dict())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Task):
            return self.to_dict() == other.to_dict()
        return super().__eq__(other)  # a task against a row: the Mapping face's comparison (it warns)

    __hash__ = None  # type: ignore[assignment]  # equal by value, and its lists are mutable

    def __repr__(self) -> str:
        return f"Task({self.instance_id!r}, family={self.family!r}, language={self.language!r})"


FIELD_ORDER = tuple(item.name for item in dataclasses.fields(Task) if item.name != "columns")
FIELDS = {item.name for item in dataclasses.fields(Task)}


def _mapping_read() -> None:
    """Warn at the code that read a task as a Mapping: the first frame out of this module and `collections.abc`'s
    mixins (`task.get` reads through them), so a warnings filter by module names the reader's."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__") in (__name__, "collections.abc"):
        frame, level = frame.f_back, level + 1
    warnings.warn(MAPPING_DEPRECATED, DeprecationWarning, stacklevel=level)


REQUIRED = ("instance_id", "repo", "family")


def require_task(value: Any, where: str) -> Task:
    """`value` if it is a `Task`, else a TypeError naming the fix: the gym's entry points take tasks, and rows
    become tasks once, where they come in (`normalise`)."""
    if not isinstance(value, Task):
        raise TypeError(f"{where} takes a Task, actual value: a {type(value).__name__}; make one from a dataset row "
                        "with uni_agent_gym.datasets.normalise(row)")  # fmt: skip
    return value


def serialise(task: Task) -> str:
    """The task as JSON, with `task_format` (what verl's parquet and the loops carry)."""
    return json.dumps({"task_format": TASK_FORMAT, **task.to_dict()})


def deserialise(text: str | Mapping[str, Any]) -> Mapping[str, Any]:
    """A task's form from `serialise` (or an older row without `task_format`: normalised as a row; a Task itself: its
    `to_dict()`); a newer format than this gym reads is an error, not a task read wrongly. Format 1's run fields
    (`RUN_FIELDS_OF_FORMAT_1`) are dropped: they were never the dataset's columns."""
    data = json.loads(text) if isinstance(text, str) else text.to_dict() if isinstance(text, Task) else dict(text)
    version = data.get("task_format")
    if version is not None and version > TASK_FORMAT:
        raise InstanceError(f"Instance {data.get('instance_id')!r}: written with task_format {version}, this gym reads up to {TASK_FORMAT}: "
                            "prepare the data again with this version (`uni-agent-gym prepare-data`)")  # fmt: skip
    if version == 1:
        data = {name: value for name, value in data.items() if name not in RUN_FIELDS_OF_FORMAT_1}
    return data
