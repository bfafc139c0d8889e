"""SWE-bench (Lite, Verified, Multilingual): a 5.x row's own columns (`image`, `log_parser`, `eval_type`, and its build
and tests from `eval_script`: `eval_scripts.py`), else environments and test commands from swebench 4.1.0's specs by
repo and version (`swebench4`), the repository's swebench parser, F2P/P2P grading under the row's `eval_type`.

A task's language is the one swebench files its repository under (`MAP_REPO_TO_EXT`, from the
per-language constants modules: C and C++ share `c`). For a repository in another language than
Python (SWE-bench Multilingual), swebench's eval script runs the spec's `build` commands after
applying the test patch, then its `test_cmd`, which already names the tests (no test files are
appended, as they are for Python): the task carries both (`build_command`, `test_command`). Where the
parser names each test by the command that ran it (`parse_log_maven`: the `-Dtest=` of one `mvn test` per
test), the commands run as that script runs them (`as_eval_script`).
Multilingual rows come with list test columns and no `environment_setup_commit` (like SWE-Gym's),
so they are recognised by their repository (a non-Python one swebench has specs for) or by SWE-bench
5.x's per-row `log_parser` and `eval_script` columns.
"""

from __future__ import annotations

import functools
from typing import Any

from uni_agent_gym import swebench4
from uni_agent_gym.datasets.base import (
    PYTHON, Family, InstanceError, Parser, fail_to_pass_task, language_name, row_id, swebench_columns,
    swebench_image_name, swebench_parser, swebench_parser_functions,
)  # fmt: skip
from uni_agent_gym.datasets.task import Task
from uni_agent_gym.datasets.eval_scripts import eval_script_steps
from uni_agent_gym.swebench4.test_commands import MAP_REPO_TO_TEST_CMDS, get_test_cmds

NAME = "swe-bench"
REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "version", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")


def recognise(row: dict[str, Any]) -> str | None:
    if not swebench_columns(row):
        return None
    if "environment_setup_commit" in row:
        return "SWE-bench columns with environment_setup_commit"
    if isinstance(row.get("FAIL_TO_PASS"), str):
        return "SWE-bench columns with FAIL_TO_PASS as a JSON string"
    if "log_parser" in row and "eval_script" in row:
        return "SWE-bench columns with log_parser and eval_script (SWE-bench 5.x rows)"
    language = repo_language(str(row.get("repo")))
    if language not in (None, PYTHON):
        return f"SWE-bench columns over a repository swebench lists under {language}"
    return None


def repo_language(repo: str) -> str | None:
    """The language swebench 4.1.0 files a repository under (`MAP_REPO_TO_EXT`), None if it has no specs for it."""
    return language_name(swebench4.MAP_REPO_TO_EXT.get(repo))


def language(row: dict[str, Any]) -> str:
    """The language swebench files the row's repository under, else the row's own `language`, else the language of the
    parser it names (5.x keeps its parsers in a module per language: a row of a repository 4.1 never listed)."""
    return repo_language(str(row.get("repo"))) or language_name(row.get("language")) or parser_language(row.get("log_parser")) or PYTHON


def parser_language(name: Any) -> str | None:
    """The language of a swebench parser (`parse_log_redis` -> `c`: the `log_parsers` module it is defined in), None for
    a name swebench does not have."""
    function = swebench_parser_functions().get(str(name or ""))
    return language_name(function.__module__.rpartition(".")[2]) if function is not None else None


def repo_parser_name(repo: str) -> str | None:
    """The name of swebench's parser for a repository (its per-language `MAP_REPO_TO_PARSER_*` tables), None if it has none."""
    parser = repo_parsers().get(repo)
    return parser.__name__ if parser is not None else None


@functools.cache
def repo_parsers() -> dict[str, Parser]:
    """swebench's parser of each repository it has one for: its per-language tables, merged (5.x no longer merges them)."""
    from swebench.harness import log_parsers

    modules = (log_parsers.c, log_parsers.go, log_parsers.java, log_parsers.javascript, log_parsers.php, log_parsers.python,
               log_parsers.ruby, log_parsers.rust)  # fmt: skip
    return {repo: parser for module in modules for name, table in vars(module).items() if name.startswith("MAP_REPO_TO_PARSER_")
            for repo, parser in table.items()}  # fmt: skip


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    image = row.get("image") or swebench_image_name(row_id(row))  # a 5.x row names its image
    task = fail_to_pass_task(row, NAME, required=REQUIRED, image_name=image, language=language(row))
    task["log_parser"] = row.get("log_parser") or repo_parser_name(task["repo"])
    if row.get("eval_script") and not task.get("test_command"):  # a 5.x row: its own build and tests
        task.update(_commands_of_eval_script(task))
    elif task["language"] != PYTHON and not task.get("test_command"):  # a row's own commands win, as for Python rows
        task.update(_commands(task))  # its toolchain and install: swebench's spec (`specs.py`)
    elif isinstance(task.get("test_command"), list):  # a row's own runs, one command each (as swebench's specs list them)
        task["test_command"] = as_eval_script(task["test_command"], task["log_parser"])
    return task


# swebench's parsers that read the command that ran the tests from the log: the line the eval script's `set -x` writes
# before each run's output. parse_log_maven names each test by its `-Dtest=` (`+ mvn test ... -Dtest=X`);
# parse_log_calypso reads only what follows a `+ ./node_modules/.bin/jest ...` line.
PARSERS_NAMING_TESTS_BY_COMMAND = frozenset({"parse_log_maven", "parse_log_calypso"})


def as_eval_script(commands: list[str], parser_name: str | None) -> str:
    """Test commands as one command that runs them the way swebench's eval script (`set -uxo pipefail`, a line
    each) does for the task's parser. Where the parser names tests by their command, each run is traced (without
    the trace, every test is unnamed and a gold patch earns 0) and the exit code is the last failing run's (the
    script's own is its last line's): a run killed halfway stays visible to the log cross-checks instead of being
    hidden by the next run's success. Elsewhere: the commands one after another, as before."""
    if parser_name not in PARSERS_NAMING_TESTS_BY_COMMAND:
        return "; ".join(commands)
    runs = "".join(f"(set -x; {command}\n) || uag_status=$?; " for command in commands)
    return f"uag_status=0; {runs}(exit $uag_status)"


SPEC_COMMANDS = "swebench-spec"  # `commands_from` of commands a task took from swebench's spec, not its row


def _commands(task: dict[str, Any]) -> dict[str, str | None]:
    """swebench's `build` and test commands of a non-Python instance (as its eval script runs them); none for a
    version swebench has no spec for: an environments entry gives them (`specs.py`), else building its image or
    grading it says what is missing."""
    spec = swebench4.spec(task["repo"], task["version"])
    if spec is None:
        return {}
    custom = MAP_REPO_TO_TEST_CMDS.get(task["repo"])  # wp-calypso: commands per test file
    tests = custom(task) if custom else get_test_cmds(task)
    return {"test_command": as_eval_script(tests, task["log_parser"]), "build_command": " && ".join(spec["build"]) if spec.get("build") else None,
            "commands_from": SPEC_COMMANDS}


def _commands_of_eval_script(task: dict[str, Any]) -> dict[str, str | None]:
    """The build and test commands of a 5.x row, from its `eval_script` (`eval_scripts.py` says which lines the gym runs)."""
    steps = eval_script_steps(task["instance_id"], task["eval_script"])
    exports = "".join(f"{line}; " for line in steps.exports)
    return {"test_command": exports + as_eval_script(steps.tests, task["log_parser"]),
            "build_command": " && ".join([*steps.exports, *steps.build]) if steps.build else None}  # fmt: skip


def parser(task: Task) -> Parser:
    """The task's swebench parser (a row may name one: SWE-bench 5.x rows carry `log_parser`)."""
    name = task.log_parser or repo_parser_name(task.repo)
    if not name:
        raise InstanceError(f"Instance {task.instance_id!r}: swebench has no log parser for {task.repo} (field repo)")
    return swebench_parser(name, task)


FAMILY = Family(
    name=NAME,
    recognise=recognise,
    normalise=normalise,
    parser=parser,
    columns="SWE-bench columns with environment_setup_commit (or FAIL_TO_PASS as a JSON string, or log_parser and eval_script, "
            "or a repository swebench lists under another language than Python)",
    images="swebench/sweb.eval.x86_64.<id, __ as _1776_>:latest",
    offline="Python rows, with exact pins from an environments file where swebench's spec needs GitHub; other languages: no",
    language=language,
)
