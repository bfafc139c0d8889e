"""The typed task (`datasets/task.py`): every row the suite ships normalises into a `Task` that survives its dict and
JSON forms unchanged, and no code outside the normalisers handles a task as a plain dict (read with `ast`)."""

from __future__ import annotations

import ast
import dataclasses
import json
import warnings
from pathlib import Path

import pytest

from tests import family_rows, fixture_sources, language_fixtures
from uni_agent_gym.datasets import InstanceError, Task, normalise
from uni_agent_gym.datasets.task import FIELDS, TASK_FORMAT, deserialise, serialise

PACKAGE = Path(__file__).resolve().parent.parent / "uni_agent_gym"
REAL = fixture_sources.SHARED.parent / "datasets"


def every_row() -> dict[str, dict]:
    """The rows the suite ships: the 19 Python fixtures, the 8 other-language ones, the families' derived rows and the
    real rows of each family (schema only: their images are not here)."""
    rows = {f"python/{key}": row for key, row in fixture_sources.derived_rows().items()}
    rows |= {f"languages/{key}": row for key, row in language_fixtures.derived_rows().items()}
    rows |= {f"family/{key}": row for key, row in family_rows.rows().items()}
    for path in sorted(REAL.glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines()):
            if line.strip():
                rows[f"real/{path.stem}/{number}"] = json.loads(line)
    return rows


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    made = {}
    for key, row in every_row().items():
        try:
            made[key] = normalise(row)
        except InstanceError:
            assert key.startswith("real/"), key  # a real row may name what this machine lacks; every fixture loads
    assert len([key for key in made if not key.startswith("real/")]) >= 32 and any(key.startswith("real/") for key in made)
    return made


def test_every_shipped_row_survives_its_dict_and_json_forms(tasks):
    for key, task in tasks.items():
        assert isinstance(task, Task) and normalise(task) is task, key
        assert normalise(task.to_dict()) == task, key  # normalising again changes nothing
        again = normalise(deserialise(serialise(task)))
        assert again == task and again.columns == task.columns, key
        assert json.loads(serialise(task))["task_format"] == TASK_FORMAT
    with warnings.catch_warnings():  # a verl sample may carry the Task itself: read as its row, not through the Mapping face
        warnings.simplefilter("error", DeprecationWarning)
        assert all(deserialise(task) == task.to_dict() for task in tasks.values())


def test_a_task_keeps_the_rows_other_columns_and_reads_its_fields_as_attributes(tasks):
    rebench = next(task for key, task in tasks.items() if task.family == "swe-rebench")
    assert "install_config" in rebench.columns and rebench.to_dict()["install_config"] == rebench.columns["install_config"]
    assert rebench.to_dict()["instance_id"] == rebench.instance_id and rebench.to_dict()["image_name"] == rebench.image_name
    with pytest.raises(dataclasses.FrozenInstanceError):
        rebench.test_command = "true"  # type: ignore[misc]
    assert rebench.image == rebench.image_name  # the family's image; a task naming none runs SWE-bench's official one
    assert Task("a__b-1", "a/b", "swe-bench").image == "swebench/sweb.eval.x86_64.a_1776_b-1:latest"
    changed = rebench.replace(test_command="true", note="a column")
    assert (changed.test_command, changed.columns["note"], rebench.test_command != "true", "note" in rebench.columns) == ("true", "a column", True, False)


def test_reading_a_task_as_a_mapping_still_works_and_warns_that_it_goes(tasks):
    """Third-party code that reads a task as a row keeps working for one release, told what to read instead; the gym's
    own code reading one so is an error under the suite (pyproject's filterwarnings)."""
    rebench = next(task for key, task in tasks.items() if task.family == "swe-rebench")
    reads = {"item": lambda: rebench["install_config"], "get": lambda: rebench.get("instance_id"), "in": lambda: "repo" in rebench,
             "dict": lambda: dict(rebench), "len": lambda: len(rebench), "against a row": lambda: rebench == rebench.to_dict()}  # fmt: skip
    for name, read in reads.items():
        with pytest.warns(DeprecationWarning, match=r"reading a Task as a Mapping .* task\.to_dict\(\)") as caught:
            value = read()
        assert caught[0].filename == __file__, name  # the warning names the reader, not the task's module
        assert value == {"item": rebench.columns["install_config"], "get": rebench.instance_id, "in": True, "dict": rebench.to_dict(),
                         "len": len(rebench.to_dict()), "against a row": True}[name], name  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert rebench == rebench.replace() and rebench != rebench.replace(test_command="true")  # tasks compare without it
        assert normalise(rebench, "swe-rebench") == rebench and rebench.to_dict()["family"] == "swe-rebench"


def test_a_newer_task_format_is_refused_and_a_non_task_says_what_it_lacks():
    task = normalise(fixture_sources.derived_rows()["pytest-dev__pytest-7168"])
    newer = json.dumps({**json.loads(serialise(task)), "task_format": TASK_FORMAT + 1})
    with pytest.raises(InstanceError, match=f"task_format {TASK_FORMAT + 1}, this gym reads up to {TASK_FORMAT}"):
        deserialise(newer)
    with pytest.raises(InstanceError, match="not a task, missing repo, family"):
        Task.from_dict({"instance_id": "x"})


TASK_NAMES = {"instance", "task", "tasks", "instances"}
ONE_TASK = {"instance", "task"}


def _plain_dict(annotation: ast.expr | None) -> bool:
    """`dict`, `dict[str, Any]`, `list[dict[...]]`: a task typed as a plain dict."""
    if annotation is None:
        return False
    text = ast.unparse(annotation)
    return text.startswith(("dict", "list[dict", "dict[str, dict")) and "Task" not in text


def dict_tasks(tree: ast.AST) -> list[str]:
    """Where a module treats a task as a plain dict: a task parameter or variable annotated as one, a task spread into a
    new dict (`{**task, ...}`: a copy that is no longer a Task), or an item assigned into a task."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for argument in [*node.args.args, *node.args.kwonlyargs]:
                if argument.arg in TASK_NAMES and _plain_dict(argument.annotation):
                    found.append(f"line {node.lineno}: parameter {argument.arg}: {ast.unparse(argument.annotation)}")
        elif isinstance(node, ast.AnnAssign) and getattr(node.target, "attr", getattr(node.target, "id", None)) in TASK_NAMES and _plain_dict(node.annotation):
            found.append(f"line {node.lineno}: {ast.unparse(node.target)}: {ast.unparse(node.annotation)}")
        elif isinstance(node, ast.Dict):
            spread = [value for key, value in zip(node.keys, node.values) if key is None]
            found += [f"line {node.lineno}: {{**{ast.unparse(value)}, ...}}" for value in spread if ast.unparse(value).split(".")[-1] in ONE_TASK]
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and ast.unparse(target.value).split(".")[-1] in ONE_TASK:
                    found.append(f"line {node.lineno}: {ast.unparse(target)} = ...")
    return found


def test_no_code_outside_the_normalisers_handles_a_task_as_a_plain_dict():
    """The families' normalisers build a task as a dict (`datasets/`, then `Task.from_dict`); everywhere else it is a
    `Task`: typed, frozen, changed only by `replace`."""
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "datasets":
            continue
        found = dict_tasks(ast.parse(path.read_text(), filename=str(path)))
        if found:
            offenders[str(path.relative_to(PACKAGE))] = found
    assert not offenders, offenders


@pytest.mark.parametrize("source, what", [
    ("def grade(instance: dict[str, Any]) -> None: ...", "parameter instance: dict[str, Any]"),
    ("def grade(tasks: list[dict]) -> None: ...", "parameter tasks: list[dict]"),
    ("copy = {**instance, 'test_patch': ''}", "{**instance, ...}"),
    ("self.task['image_id'] = found", "self.task['image_id'] = ..."),
])  # fmt: skip
def test_the_check_finds_each_way_of_treating_a_task_as_a_dict(source, what):
    assert [line.split(": ", 1)[1] for line in dict_tasks(ast.parse(source))] == [what]
    assert dict_tasks(ast.parse("def grade(instance: Task, rows: dict[str, Any]) -> None: ...")) == []
