"""Rows become tasks once, where they come in (issue 70): below the loaders every function takes a `Task`.

Read from the package's source with `ast`, each name resolved through the module's imports to the object it
names, so the checks hold on types, not spellings (`Mapping as M`, `typing.Dict`, `from ... import normalise as n`
are found too):
- no parameter's annotation lets a task in beside a Mapping (`Task | Mapping[str, Any]`, `list[Task | dict]`): the
  function would have to check which it was given, and normalise again;
- no call makes a task from a row (`datasets.normalise`, `instances.normalise`, `Task.from_dict`) outside the loaders;
- no code outside `datasets/` sets a task's field after it was made (the task is the dataset's data, what a run has is
  its `Episode`'s): no `.replace(...)` with keywords (a task's `replace` sets a column under a name that is no field:
  `task.replace(environment_commit=...)` would hide the run's state in the row), no `dataclasses.replace(...)` naming a
  Task field or spreading `**` keywords, no `object.__setattr__(x, "<a Task field>", ...)`, no `Task(...)` made anew.
  A value's type is not in the source, so these calls count whatever they are called on (a `datetime.replace(year=...)`
  or a `dataclasses.replace` of another dataclass with a field of a Task's name would be counted too: write the change
  otherwise).
And an episode and a grading, run with the Task's deprecated Mapping face an error, read no task as a row: the gym's own
code is held by pyproject's filterwarnings, this also holds the libraries it hands a task to.
"""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import importlib
import typing
import warnings
from pathlib import Path

import pytest

from tests import weak_toy
from tests.test_deployment_contract import graded_episode
from uni_agent_gym import datasets, instances
from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets.task import MAPPING_DEPRECATED, Task
from uni_agent_gym.rewards.swebench import SWEBenchReward

PACKAGE = Path(__file__).resolve().parent.parent / "uni_agent_gym"
# Where rows come in: the families and the normaliser, the dataset loaders, the env's reset(options=...) and its
# instances=, the CLI's row readers, grade's rows, `datasets --dataset`.
LOADERS = ("datasets/", "instances.py", "envs/async_env.py", "cli.py", "eval/grade.py", "dataset_summary.py")
MAKE_TASK = (datasets.normalise, instances.normalise, Task.from_dict)
# The modules a name is resolved in (by importing them): where tasks, rows' types and what makes a task are; any other
# module's names are none of these (and importing the package's every module, Ray's and verl's, would be slow).
RESOLVED = ("uni_agent_gym.datasets", "uni_agent_gym.instances", "builtins", "typing", "collections", "dataclasses")
TASK_FIELDS = {item.name for item in dataclasses.fields(Task)}


def imported_names(tree: ast.Module, module: str) -> dict[str, str]:
    """{local name: dotted path of what it names} from every import of a module (also lazy ones in functions)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package
                base = ".".join(module.split(".")[: -node.level] + ([base] if base else []))
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}"
    return names


def resolve(node: ast.expr, names: dict[str, str]) -> object | None:
    """The object a name or dotted attribute stands for in the module (builtins included), None if unknown."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    path = [*names.get(node.id, f"builtins.{node.id}").split("."), *parts]
    for split in range(len(path), 0, -1):  # the longest importable module, then attributes
        if not ".".join(path[:split]).startswith(RESOLVED):  # neither tasks, nor rows' types, nor what makes a task
            continue
        try:
            found: object = importlib.import_module(".".join(path[:split]))
        except ImportError:
            continue
        try:
            for attribute in path[split:]:
                found = getattr(found, attribute)
        except AttributeError:
            return None
        return found
    return None


def is_task(found: object) -> bool:
    return isinstance(found, type) and issubclass(found, Task)


def is_mapping(found: object) -> bool:
    """A Mapping type: `dict`, `collections.abc.Mapping`, `typing.Dict`, `typing.Mapping` (not a Task)."""
    found = typing.get_origin(found) or found
    return isinstance(found, type) and issubclass(found, collections.abc.Mapping) and not issubclass(found, Task)


def union_members(node: ast.expr) -> list[ast.expr]:
    """The members of `A | B | C` or `Union[A, B]` / `Optional[A]`, each without its subscript (`Mapping[str, Any]`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union_members(node.left) + union_members(node.right)
    return [node.value if isinstance(node, ast.Subscript) else node]


def task_beside_a_mapping(annotation: ast.expr, names: dict[str, str]) -> bool:
    """Whether the annotation, or a part of it (`list[Task | Mapping]`), is a union of a Task and a Mapping."""
    for node in ast.walk(annotation):
        members = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            members = union_members(node)
        elif isinstance(node, ast.Subscript) and resolve(node.value, names) in (typing.Union, typing.Optional):
            members = [item.value if isinstance(item, ast.Subscript) else item for item in (node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice])]
        if members:
            found = [resolve(member, names) for member in members]
            if any(map(is_task, found)) and any(map(is_mapping, found)):
                return True
    return False


def annotation_of(node: ast.expr | None) -> ast.expr | None:
    """A string annotation parsed (`from __future__ import annotations` keeps them as code, but some are quoted)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ast.parse(node.value, mode="eval").body
    return node


def crossings(source: str, module: str) -> list[str]:
    """Where a module's code lets a row in below the loaders: `line: what`."""
    tree = ast.parse(source)
    names = imported_names(tree, module)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
                annotation = annotation_of(argument.annotation) if argument is not None else None
                if annotation is not None and task_beside_a_mapping(annotation, names):
                    found.append(f"{node.lineno}: {node.name}({argument.arg}: {ast.unparse(annotation)}) takes a row beside a Task")
        elif isinstance(node, ast.Call) and resolve(node.func, names) in MAKE_TASK:  # `==`: a classmethod is bound anew
            found.append(f"{node.lineno}: {ast.unparse(node.func)}(...) makes a task below the loaders")
    return found


def task_rewrites(source: str, module: str) -> list[str]:
    """Where a module's code sets a field of a task it was given (the module docstring's list): `line: what`."""
    tree = ast.parse(source)
    names = imported_names(tree, module)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = resolve(node.func, names)
        keywords = [keyword.arg or "**..." for keyword in node.keywords]
        named = [keyword for keyword in keywords if keyword in TASK_FIELDS or keyword == "**..."]
        if function is dataclasses.replace and named:
            found.append(f"{node.lineno}: {ast.unparse(node.func)}({', '.join(named)}) sets a task's field after it was made")
        elif function is not dataclasses.replace and isinstance(node.func, ast.Attribute) and node.func.attr == "replace" and keywords:
            found.append(f"{node.lineno}: {ast.unparse(node.func)}({', '.join(keywords)}) sets a task's field or column after it was made")
        elif function is object.__setattr__ and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in TASK_FIELDS:
            found.append(f"{node.lineno}: object.__setattr__(..., {node.args[1].value!r}) sets a task's field after it was made")
        elif is_task(function):
            found.append(f"{node.lineno}: {ast.unparse(node.func)}(...) makes a task anew")
    return found


def package_modules() -> list[tuple[str, Path]]:
    return [(path.relative_to(PACKAGE).as_posix(), path) for path in sorted(PACKAGE.rglob("*.py"))]


def test_below_the_loaders_every_function_takes_a_task_and_none_makes_one():
    found = []
    for relative, path in package_modules():
        if relative.startswith(LOADERS):
            continue
        module = "uni_agent_gym." + relative.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        found += [f"uni_agent_gym/{relative}:{where}" for where in crossings(path.read_text(), module)]
    assert not found, "rows are normalised where they come in (the loaders); below them a function takes a Task:\n" + "\n".join(found)


def test_no_task_field_is_set_after_the_task_was_made():
    """Task fields set after normalise: none. The start commit, a start state's test patch, what an image records and
    its commands are the Episode's (`workspaces/episode.py`); a grading sandbox is an episode of the same task."""
    found = []
    for relative, path in package_modules():
        if relative.startswith("datasets/"):
            continue
        module = "uni_agent_gym." + relative.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        found += [f"uni_agent_gym/{relative}:{where}" for where in task_rewrites(path.read_text(), module)]
    assert not found, "a task is the dataset's data, never rewritten while it runs (what the run has is its Episode's):\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    "def f(task, made):\n    return task.replace(test_patch=made)",
    "def f(task, head):\n    return task.replace(environment_commit=head)",
    "def f(task, commands):\n    return task.replace(**commands)",
    "import dataclasses as dc\ndef f(task):\n    return dc.replace(task, test_patch='')",
    "from dataclasses import replace as r\ndef f(task):\n    return r(task, test_command='make')",
    "def f(task):\n    object.__setattr__(task, 'test_patch', '')",
    "from uni_agent_gym.datasets import Task as T\ndef f(task):\n    return T(task.instance_id, task.repo, task.family, test_patch='')",
], ids=["replace-method", "replace-a-column", "replace-spread", "dataclasses-renamed", "replace-imported", "setattr", "made-anew"])
def test_the_rewrite_check_finds_a_field_set_however_it_is_spelled(source):
    assert task_rewrites(source, "uni_agent_gym.somewhere")


def test_the_rewrite_check_leaves_alone_what_only_looks_alike():
    source = (
        "import dataclasses\n"
        "def f(text: str, episode):\n"
        "    text = text.replace('a', 'b')\n"  # str's: no keyword
        "    return dataclasses.replace(episode, start_commit='abc', made_test_patch='')\n"  # an Episode's own fields
    )
    assert task_rewrites(source, "uni_agent_gym.somewhere") == []


@pytest.mark.parametrize("source", [
    "from collections.abc import Mapping\nfrom uni_agent_gym.datasets import Task\ndef f(task: Task | Mapping[str, int]): ...",
    "from typing import Dict as D, Union\nfrom uni_agent_gym.datasets.task import Task as T\nasync def f(rows: list[Union[T, D]]): ...",
    "import uni_agent_gym.datasets as ds\ndef f(task: 'ds.Task | dict'): ...",
    "from uni_agent_gym.instances import normalise as n\ndef f(row):\n    return n(row)",
    "from uni_agent_gym import datasets\ndef f(row):\n    return datasets.normalise(row)",
    "from uni_agent_gym.datasets import Task\ndef f(row):\n    return Task.from_dict(row)",
], ids=["union", "typing-aliases", "quoted", "normalise-renamed", "normalise-by-module", "from_dict"])
def test_the_check_finds_a_row_let_in_however_it_is_spelled(source):
    assert crossings(source, "uni_agent_gym.somewhere")


def test_the_check_leaves_alone_what_only_looks_alike():
    source = (
        "from collections.abc import Mapping\nfrom uni_agent_gym.datasets import Task\n"
        "def normalise(text: str) -> str: ...\n"  # another module's own normalise
        "def f(task: Task, environments: Mapping[str, dict] | None, text: str) -> str:\n    return normalise(text)\n"
    )
    assert crossings(source, "uni_agent_gym.somewhere") == []


async def test_an_episode_and_its_grading_read_no_task_as_a_mapping(tmp_path):
    """The weak toy (local, its mirror): an episode whose agent types in a wrong fix (the env's reward, with the
    differential check grading gold beside it), then `grade_patch` of gold, with any read of a task as a Mapping
    anywhere (ours or a library's) an error."""
    config = GymConfig.model_validate({"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp_path / "cache"), "workspace": "mirror"},
                                       "reward": {"differential": True}})  # fmt: skip
    task = datasets.normalise(await weak_toy.weak_toy_row(str(tmp_path / "cache")))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=MAPPING_DEPRECATED.split(" (")[0], category=DeprecationWarning)
        report = await graded_episode(config, task, [f"git apply <<'UAG_EOF'\n{weak_toy.WRONG_SPECIAL_CASE}UAG_EOF"])
        graded = await SWEBenchReward.from_config(config).grade_patch(task, weak_toy.GOLD_PATCH)
    assert (report["status"], report["differential"]["suspect"]) == ("resolved", True), report
    assert (graded.status, graded.error) == ("resolved", None)
