"""SWE-bench (Lite, Verified, the Python part of Multilingual): environments and test commands from
`swebench==4.1.0`'s specs by repo and version, the repository's swebench parser, F2P/P2P grading."""

from __future__ import annotations

from typing import Any

from uni_agent_gym.datasets.base import (
    Family, InstanceError, Parser, fail_to_pass_task, row_id, swebench_columns, swebench_image_name, swebench_parser,
)  # fmt: skip

NAME = "swe-bench"
REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "version", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")


def recognise(row: dict[str, Any]) -> str | None:
    if not swebench_columns(row):
        return None
    if "environment_setup_commit" in row:
        return "SWE-bench columns with environment_setup_commit"
    if isinstance(row.get("FAIL_TO_PASS"), str):
        return "SWE-bench columns with FAIL_TO_PASS as a JSON string"
    return None


def repo_parser_name(repo: str) -> str | None:
    """The name of swebench's parser for a repository (MAP_REPO_TO_PARSER), None if it has none."""
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

    parser = MAP_REPO_TO_PARSER.get(repo)
    return parser.__name__ if parser is not None else None


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    task = fail_to_pass_task(row, NAME, required=REQUIRED, image_name=swebench_image_name(row_id(row)))
    task["log_parser"] = row.get("log_parser") or repo_parser_name(task["repo"])
    return task


def parser(task: dict[str, Any]) -> Parser:
    """The task's swebench parser (a row may name one: SWE-bench 5.x rows carry `log_parser`)."""
    name = task.get("log_parser") or repo_parser_name(task["repo"])
    if not name:
        raise InstanceError(f"Instance {task['instance_id']!r}: swebench has no log parser for {task['repo']} (field repo)")
    return swebench_parser(name, task["instance_id"])


FAMILY = Family(
    name=NAME,
    recognise=recognise,
    normalise=normalise,
    parser=parser,
    columns="SWE-bench columns with environment_setup_commit (or FAIL_TO_PASS as a JSON string)",
    images="swebench/sweb.eval.x86_64.<id, __ as _1776_>:latest",
    offline="yes, with exact pins from an environments file where swebench's spec needs GitHub",
)
