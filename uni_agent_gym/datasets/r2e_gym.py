"""R2E-Gym (R2E-Gym/R2E-Gym-Subset, -Lite, -V1): a repository image per commit, its tests baked in.

R2E-Gym's images hold the repository at /testbed (at the commit before `commit_hash`), its tests in
/r2e_tests and their runner at /testbed/run_tests.sh; R2E-Gym's own runtime (agenthub/runtime/docker.py)
only *moves* them to /root, which a root agent can read. Here the agent's sandbox is an image derived
once without them (`hidden_paths`), and grading runs in a fresh container of the original image:
/testbed/r2e_tests links to /r2e_tests as R2E-Gym links it, `bash run_tests.sh` runs the tests, and a
patch may not change `run_tests.sh` or `r2e_tests` (`protected_paths`).

Grading is R2E-Gym's `_calculate_reward_r2e`, which no package on PyPI provides, so it is written here
from its source: the log is read by R2E-Gym's `parse_log_pytest` (the short test summary of `pytest
-rA`; a test is named by its class and function joined by ".", without the file), ANSI colours are
dropped from the names, names are cut at " - ", and the reward is 1 only when the parsed outcomes have
exactly the keys of `expected_output_json` and each outcome equals the expected one. Unlike SWE-bench, a
test the log has but the row does not expect fails the instance, and every expected outcome counts,
FAILED ones too; where R2E-Gym would raise on equal counts with different names, this is a failure.
The gold patch is R2E-Gym's `ParsedCommit.get_patch(test_file=False)`: the Python non-test file diffs of
`parsed_commit_content`.
"""

from __future__ import annotations

import re
from typing import Any

from uni_agent_gym.datasets.base import (
    EXPECTED_OUTPUT_GRADING, IMAGE_REPO_DIR, PYTHON, Family, InstanceError, Parser, json_field, require,
)  # fmt: skip
from uni_agent_gym.datasets.task import Task

NAME = "r2e-gym"
REQUIRED = ("repo_name", "docker_image", "commit_hash", "parsed_commit_content", "expected_output_json", "problem_statement")
HIDDEN_PATHS = ["/r2e_tests", f"{IMAGE_REPO_DIR}/run_tests.sh"]
PROTECTED_PATHS = ["run_tests.sh", "r2e_tests"]
TEST_COMMAND = "ln -sfn /r2e_tests r2e_tests && bash run_tests.sh"
RUNNER = "pytest"  # run_tests.sh runs `pytest -rA r2e_tests`: the log cross-checks read pytest's own report
_ANSI = re.compile(r"\x1b\[\d+m")


def recognise(row: dict[str, Any]) -> str | None:
    if "expected_output_json" in row and "docker_image" in row:
        return "docker_image and expected_output_json columns"
    return None


def instance_id_of(row: dict[str, Any]) -> str:
    return str(row.get("instance_id") or f"{row.get('repo_name')}__{str(row.get('commit_hash'))[:12]}")


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    instance_id = instance_id_of(row)
    require(row, REQUIRED, instance_id=instance_id)
    expected = json_field(instance_id, "expected_output_json", row["expected_output_json"], dict)
    if not expected or not all(isinstance(status, str) for status in expected.values()):
        raise InstanceError(f"Instance {instance_id!r}: field expected_output_json expects a non-empty object of test name -> status")
    commit = json_field(instance_id, "parsed_commit_content", row["parsed_commit_content"], dict)
    if not commit.get("old_commit_hash"):
        raise InstanceError(f"Instance {instance_id!r}: field parsed_commit_content.old_commit_hash is missing")
    task = dict(row)
    task.update(
        family=NAME, language=PYTHON, instance_id=instance_id, repo=row["repo_name"], base_commit=commit["old_commit_hash"],
        patch=gold_patch(commit, instance_id), test_patch="", FAIL_TO_PASS=[], PASS_TO_PASS=[], expected_output=expected,
        image_name=row["docker_image"], workdir=IMAGE_REPO_DIR, test_command=TEST_COMMAND, build_command=None, log_parser=NAME,
        grading=EXPECTED_OUTPUT_GRADING, hidden_paths=list(HIDDEN_PATHS), protected_paths=list(PROTECTED_PATHS),
    )  # fmt: skip
    return task


def parse_log(log: str) -> dict[str, str]:
    """R2E-Gym's `parse_log_pytest` (repo_analysis/execution_log_parser.py), the parser of every R2E-Gym repository."""
    statuses: dict[str, str] = {}
    if "short test summary info" not in log:
        return statuses
    for line in log.split("short test summary info")[1].strip().split("\n"):
        if "PASSED" in line:
            statuses[".".join(line.split("::")[1:])] = "PASSED"
        elif "FAILED" in line:
            statuses[".".join(line.split("::")[1:]).split(" - ")[0]] = "FAILED"
        elif "ERROR" in line:
            statuses[".".join(line.split("::")[1:]).split(" - ")[0]] = "ERROR"
    return statuses


def parser(task: Task) -> Parser:
    return parse_log


def compare(statuses: dict[str, str], expected: dict[str, str]) -> tuple[bool, dict[str, list[str]]]:
    """R2E-Gym's comparison: (resolved, {"matched": [...], "mismatched": [...], "unexpected": [...], "missing": [...]})."""
    def keyed(outcomes: dict[str, str]) -> dict[str, str]:
        plain = {_ANSI.sub("", name): status for name, status in outcomes.items()}
        return {name.split(" - ")[0]: plain[name] for name in sorted(plain)}

    parsed, wanted = keyed(statuses), keyed(expected)
    report = {
        "matched": sorted(name for name in parsed if name in wanted and parsed[name] == wanted[name]),
        "mismatched": sorted(name for name in parsed if name in wanted and parsed[name] != wanted[name]),
        "unexpected": sorted(name for name in parsed if name not in wanted),
        "missing": sorted(name for name in wanted if name not in parsed),
    }
    return len(parsed) == len(wanted) and not (report["mismatched"] or report["unexpected"] or report["missing"]), report


def gold_patch(commit: dict[str, Any], instance_id: str) -> str:
    """`ParsedCommit.get_patch(test_file=False, non_test_file=True)` (only_python) of R2E-Gym's commit_models."""
    try:
        return "".join(_file_patch(diff) for diff in commit.get("file_diffs") or [] if _is_python(diff) and not _is_test_file(diff))
    except (KeyError, TypeError) as exc:
        raise InstanceError(f"Instance {instance_id!r}: field parsed_commit_content.file_diffs is not R2E-Gym's ParsedCommit ({exc!r})") from None


def _path(diff: dict[str, Any]) -> str:
    return diff["header"]["file"]["path"]


def _is_python(diff: dict[str, Any]) -> bool:
    return _path(diff).endswith(".py")


def _is_test_file(diff: dict[str, Any]) -> bool:
    path = _path(diff)
    parts = path.split("/")
    return (path.endswith("_test.py") or path.startswith("test_") or parts[-1].startswith("test_")
            or any(part in parts for part in ("tests", "Tests", "test", "Test")))  # fmt: skip


def _range(value: dict[str, Any]) -> str:
    return f"{value['start']}" if value.get("length") is None else f"{value['start']},{value['length']}"


def _file_patch(diff: dict[str, Any]) -> str:
    header = diff["header"]
    text = f"diff --git a/{_path(diff)} b/{_path(diff)}\n" + (header["misc_line"] + "\n" if header.get("misc_line") else "")
    if diff.get("index_line"):
        index = diff["index_line"]
        text += f"index {index['old_commit_hash']}..{index['new_commit_hash']}{' ' if index['mode'] else ''}{index['mode']}\n"
    if diff.get("is_binary_file"):
        text += diff["binary_line"] + "\n"
    if diff.get("minus_file") and diff.get("plus_file"):
        text += f"--- {diff['minus_file']['path']}\n+++ {diff['plus_file']['path']}\n"
    marks = {"context": " ", "added": "+", "deleted": "-", "note": "\\ "}
    for hunk in diff.get("hunks") or []:
        descriptor = hunk["descriptor"]
        text += f"@@ -{_range(descriptor['old_range'])} +{_range(descriptor['new_range'])} @@" + (f" {descriptor['section']}" if descriptor.get("section") else "") + "\n"
        text += "".join(f"{marks[line['type']]}{line['content']}\n" for line in hunk["line_group"]["all_lines"])
    return text


FAMILY = Family(
    name=NAME,
    recognise=recognise,
    normalise=normalise,
    parser=parser,
    columns="docker_image, repo_name, commit_hash and expected_output_json columns",
    images="the row's docker_image (namanjain12/<repo>_final:<commit_hash>); the agent runs an image derived without the tests",
    offline="no: the tests exist only in R2E-Gym's images (pull them once, then the derived image is made offline)",
)
