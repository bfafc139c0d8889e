"""SWE-Gym: SWE-bench's columns (test lists as lists, no environment_setup_commit) over repositories
swebench's specs do not cover (moto, mypy, dask, pandas, ...).

SWE-Gym graded with its fork of swebench (SWE-Gym/SWE-Bench-Fork), which is not on PyPI: its per-repo
test commands are the table below, copied from that fork's `swebench/harness/constants.py` (each is
followed by the test files of `test_patch`, as in swebench); its parsers are swebench's
`parse_log_pytest` (pydantic's `parse_log_pytest_pydantic` is swebench 4.1.0's `parse_log_pytest_v2`
plus dropping a `[...]` after FAILED, so pydantic rows use `parse_log_pytest_v2`). Repositories of
SWE-bench itself keep swebench 4.1.0's specs. Its environments (conda `environment.yml`, `make init`,
apt-get) need the network: give exact pins in an environments file to build them here.
"""

from __future__ import annotations

from typing import Any

from uni_agent_gym.datasets.base import Family, fail_to_pass_task, row_id, swebench_columns, swebench_image_name
from uni_agent_gym.datasets.swebench import parser, repo_parser_name
from uni_agent_gym.swebench4.test_commands import get_test_directives

NAME = "swe-gym"
REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "version", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")
PYTEST_N0 = "pytest -n0 -rA"
TEST_COMMANDS = {  # the fork's TEST_* per repository (mypy: per version below)
    "getmoto/moto": PYTEST_N0,
    "conan-io/conan": "export PYTHONPATH=${PYTHONPATH:-}:$(pwd); pytest -n0 -rA",  # its eval_commands, then the test command
    "dask/dask": "pytest -n0 -rA  --color=no",
    "project-monai/monai": "pytest -rA ",
    "iterative/dvc": "pytest -rA",
    "bokeh/bokeh": "pytest -rA -n0",
    "modin-project/modin": PYTEST_N0,
    "hypothesisworks/hypothesis": "pytest -n0 -rA --tb=no --no-header",
    "pydantic/pydantic": "pytest -rA --tb=short -vv -o console_output_style=classic --no-header",
    "pandas-dev/pandas": "pytest -rA --tb=long",
    "facebookresearch/hydra": "pytest -rA --tb=long",
    "python/mypy": "pytest -n0 -rA -k",
}
MYPY_WITHOUT_N0 = ("1.7", "1.8", "1.9", "1.10", "1.11")  # the fork runs these with "pytest -rA -k"
PARSERS = {"pydantic/pydantic": "parse_log_pytest_v2"}  # every other SWE-Gym repository: parse_log_pytest


def recognise(row: dict[str, Any]) -> str | None:
    if swebench_columns(row) and "environment_setup_commit" not in row and not isinstance(row.get("FAIL_TO_PASS"), str):
        return "SWE-bench columns with test lists as lists and no environment_setup_commit"
    return None


def fork_test_command(repo: str, version: str) -> str | None:
    """The fork's test command of a SWE-Gym repository (without test files), None for SWE-bench's own."""
    key = repo.lower()
    if key == "python/mypy" and version in MYPY_WITHOUT_N0:
        return "pytest -rA -k"
    return TEST_COMMANDS.get(key)


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    task = fail_to_pass_task(row, NAME, required=REQUIRED, image_name=swebench_image_name(row_id(row), separator="_s_", namespace="xingyaoww"))
    command = fork_test_command(task["repo"], task["version"])
    task["test_command"] = " ".join([command.strip(), *get_test_directives(task)]) if command else None
    if command:  # the fork's own recipes (conda environment.yml, make init, apt-get) need the network
        task["environment"] = {"unbuildable": f"SWE-Gym's recipe for {task['repo']} (its fork of swebench) installs with the network; "
                                              "give exact pins in an environments file"}  # fmt: skip
    task["log_parser"] = row.get("log_parser") or PARSERS.get(task["repo"].lower()) or (
        "parse_log_pytest" if command else repo_parser_name(task["repo"])
    )
    return task


FAMILY = Family(
    name=NAME,
    recognise=recognise,
    normalise=normalise,
    parser=parser,
    columns="SWE-bench columns, FAIL_TO_PASS/PASS_TO_PASS as lists, no environment_setup_commit",
    images="xingyaoww/sweb.eval.x86_64.<id, __ as _s_>:latest",
    offline="with exact pins from an environments file (its own recipes use conda and the network)",
)
