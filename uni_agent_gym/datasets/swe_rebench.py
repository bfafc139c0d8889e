"""SWE-rebench (nebius/SWE-rebench and SWE-rebench-V2): SWE-bench's columns plus an `install_config`
per row that says how to install and test it, and which swebench parser reads its log.

As SWE-rebench's fork of swebench (SWE-rebench/SWE-bench-fork, `harness/utils.py`
`_clean_install_config`) runs them: `LANG=C.UTF-8 LC_ALL=C.UTF-8` before `install` and `test_cmd`,
the test files of `test_patch` after `test_cmd` (Python rows), `base_commit` as the environment
commit, and `MAP_REPO_TO_PARSER[install_config["log_parser"]]`, here swebench 5.x's parser of that name
(`PARSER_REGISTRY`). FAIL_TO_FAIL and PASS_TO_FAIL stay in the task and in the grade's report; they do not count.

The row's recipe becomes the task's `environment` for `images build` and local venvs, with exact
pins only: the row's `requirements` (the environment's `pip freeze`), else `pip_packages` when every
one is pinned. What cannot be built offline is refused with the reason: conda environments, apt-get
steps, unpinned packages, languages other than Python (SWE-rebench-V2's C, Go, ... rows).
"""

from __future__ import annotations

import re
from typing import Any

from uni_agent_gym.datasets.base import (
    PYTHON, Family, InstanceError, fail_to_pass_task, json_field, language_name, list_of_tests, other_language_environment, row_id,
    swebench_columns, swebench_image_name, swebench_parser,
)  # fmt: skip
from uni_agent_gym.datasets.swebench import parser
from uni_agent_gym.swebench4.test_commands import get_test_directives

NAME = "swe-rebench"
REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "install_config")
LOCALE = "LANG=C.UTF-8 LC_ALL=C.UTF-8 "
_PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?==[^\s;=]+(\s*;.*)?$")
_NEEDS_NETWORK = re.compile(r"\b(apt-get|apt|conda|curl|wget|git clone|npm|yarn)\b|git\+|https?://")


def recognise(row: dict[str, Any]) -> str | None:
    return "an install_config column" if "install_config" in row and swebench_columns(row) else None


def language(row: dict[str, Any]) -> str:
    """The row's `language` column (SWE-rebench-V2), else Python (SWE-rebench v1 is Python only)."""
    return language_name(row.get("language")) or PYTHON


def _commands(value: Any) -> str:
    return "; ".join(value) if isinstance(value, list) else str(value)


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    instance_id = row_id(row)
    default_image = swebench_image_name(instance_id, namespace="swerebench")
    image_name = row.get("image_name") or row.get("docker_image") or default_image
    task = fail_to_pass_task(row, NAME, required=REQUIRED, image_name=image_name, language=language(row))
    config = json_field(instance_id, "install_config", row["install_config"], dict)
    for key in ("test_cmd", "log_parser"):
        if not config.get(key):
            raise InstanceError(f"Instance {instance_id!r}: field install_config.{key} is missing")
    swebench_parser(config["log_parser"], instance_id)  # a parser swebench lacks is this row's error, not a silent 0
    for name in ("FAIL_TO_FAIL", "PASS_TO_FAIL"):
        if row.get(name) is not None:
            task[name] = list_of_tests(instance_id, name, row[name])
    python_row = task["language"] == PYTHON
    command = LOCALE + _commands(config["test_cmd"])
    if python_row:
        command = " ".join([command, *get_test_directives(task)])
    task.update(install_config=config, test_command=command, log_parser=config["log_parser"], environment=recipe(row, config, task["language"]))
    if not python_row:
        # SWE-rebench-V2 images keep the repository in their WORKDIR (`/<project>`, not /testbed), and the row does not say which
        task["workdir"] = None
    return task


PINS = "give exact pins in an environments file"


def recipe(row: dict[str, Any], config: dict[str, Any], language: str) -> dict[str, Any]:
    """The row's environment in the environments-file shape, or {"unbuildable": why, and what to do} (see the module doc)."""
    if language != PYTHON:
        return other_language_environment(language)
    why = _unbuildable(row, config)
    if why:
        return {"unbuildable": f"{why}; {PINS}"}
    pins = [line.strip() for line in str(row.get("requirements") or "").splitlines()]
    pins = [pin for pin in pins if pin and not pin.startswith(("#", "-e ")) and " @ " not in pin]
    if not pins:
        pins = list(config.get("pip_packages") or [])
        loose = [pin for pin in pins if not _PIN.match(pin)]
        if loose:
            return {"unbuildable": f"install_config.pip_packages has packages without an exact version ({', '.join(loose[:3])}) and the row has no requirements (pip freeze); {PINS}"}
    else:
        loose = [pin for pin in pins if not _PIN.match(pin)]
        if loose:
            return {"unbuildable": f"the requirements column has lines that are not exact pins ({', '.join(loose[:3])}); {PINS}"}
    install = config.get("install")
    return {
        "python": str(config["python"]),
        "pip_requirements": pins,
        "install_cmd": LOCALE + _commands(install) if install else "true",
        "pre_install": list(config.get("pre_install") or []),
        "env": {str(key): str(value) for key, value in (config.get("env_vars") or {}).items()},
    }


def _unbuildable(row: dict[str, Any], config: dict[str, Any]) -> str | None:
    if not config.get("python"):
        return "install_config.python is missing"
    if config.get("env_yml_path") or config.get("packages") == "environment.yml":
        return "it installs a conda environment.yml, which needs the network"
    if config.get("packages") == "requirements.txt" and not row.get("requirements"):
        return f"it installs {config.get('reqs_path') or 'requirements.txt'} unpinned and the row has no requirements (pip freeze)"
    steps = [_commands(config.get(key) or "") for key in ("pre_install", "install")]
    offending = next((step for step in steps if _NEEDS_NETWORK.search(step)), None)
    if offending:
        return f"its install steps need the network ({_NEEDS_NETWORK.search(offending).group(0)}: {offending[:120]})"
    return None


FAMILY = Family(
    name=NAME,
    recognise=recognise,
    normalise=normalise,
    parser=parser,
    columns="an install_config column (python, install, test_cmd, log_parser, pip_packages, ...)",
    images="the row's image_name / docker_image, else swerebench/sweb.eval.x86_64.<id, __ as _1776_>:latest",
    offline="Python rows from the row's own recipe when its pins are exact (requirements or pinned pip_packages)",
    language=language,
)
