"""What runs the tests goes back to the start commit before they run, whatever the patch did to it.

A patch may hold anything, including changes to the test runner: a `conftest.py` that drops the real
tests and prints PASSED lines, `addopts` in pytest's configuration, an edited `bin/test` (sympy) or
`tests/runtests.py` (Django). None of that may take effect, so before the tests run these files are
returned to the start commit (files the start commit does not have are deleted):

- every `conftest.py`, `pytest.ini`, `.pytest.ini` and `tox.ini` the patch touches;
- every file the test command names (`bin/test`, `./tests/runtests.py`, ...) that the patch touches;
- `setup.cfg` and `pyproject.toml` when the patch changes their pytest section (`[tool:pytest]`,
  `[tool.pytest.ini_options]`); their other changes are legitimate and stay otherwise;
- compiled bytecode (`*.pyc` / `*.pyo`, anything under `__pycache__/`): Python would run it instead of
  the source it claims to be compiled from.

The report lists what was restored and why.
"""

from __future__ import annotations

import configparser
import shlex
import sys
from pathlib import PurePosixPath

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.instances import patch_files

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_NAMES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini")


def command_files(test_command: str) -> set[str]:
    """Repository paths the test command runs: its words that look like relative file paths."""
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    found = set()
    for word in words:
        if "=" in word.split("/")[0] or word.startswith("-") or "/" not in word or "::" in word:
            continue
        path = PurePosixPath(word)
        if not path.is_absolute() and ".." not in path.parts:
            found.add(str(path))  # PurePosixPath drops a leading "./"
    return found


def pytest_section(name: str, text: str | None) -> str | None:
    """The pytest section of a setup.cfg or pyproject.toml, as a comparable string (None: absent)."""
    if text is None:
        return None
    try:
        if name == "pyproject.toml":
            pytest = tomllib.loads(text).get("tool", {}).get("pytest")
            return None if pytest is None else repr(pytest)
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        parser.read_string(text)
        section = "tool:pytest" if parser.has_section("tool:pytest") else "pytest"
        return repr(sorted(parser.items(section))) if parser.has_section(section) else None
    except (tomllib.TOMLDecodeError, configparser.Error):
        return "<unparseable>"  # a file no parser reads the same way twice is not trusted


async def runner_files_to_restore(deployment: Deployment, repo_dir: str, start: str, patch: str, test_command: str) -> dict[str, str]:
    """{path: why} for the files of the patch that must go back to `start` (see the module docstring)."""
    touched = patch_files(patch)
    runs = command_files(test_command)
    restore = {}
    for path in touched:
        name = PurePosixPath(path).name
        if name in CONFIG_NAMES:
            restore[path] = f"{name} configures the test runner"
        elif name.endswith((".pyc", ".pyo")) or "__pycache__" in PurePosixPath(path).parts:
            restore[path] = "compiled bytecode runs instead of its source"
        elif path in runs:
            restore[path] = "the test command runs it"
        elif path in ("setup.cfg", "pyproject.toml"):
            before = await _read(deployment, repo_dir, f"git show {start}:{shlex.quote(path)}")
            after = await _read(deployment, repo_dir, f"cat -- {shlex.quote(path)}")
            if pytest_section(path, before) != pytest_section(path, after):
                restore[path] = "its pytest section was changed"
    return restore


async def _read(deployment: Deployment, repo_dir: str, command: str) -> str | None:
    result = await deployment.run(f"cd {shlex.quote(repo_dir)} && {command} 2>/dev/null", timeout=60)
    return result.output if result.exit_code == 0 else None
