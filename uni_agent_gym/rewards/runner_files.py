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

Other languages' runners (the task's `language`) have their own (`RUNNER_FILES`): the files that hold tests or
their helpers (go's `*_test.go` and `testdata/`, a `tests/` tree of C, Rust, PHP or Ruby, Maven's `src/test/`,
JavaScript's `__tests__/` and `*.test.js`), where a patch could plant a `TestMain` that reports every test
passed, edit redis's Tcl harness (`tests/test_helper.tcl`) or an assertion helper; and what configures the
runner (jest / vitest / mocha / karma configs, `.mvn/` (`maven.config` can say `-DskipTests`),
`phpunit.xml`, `.rspec`, `.cargo/config.toml`). A real fix does not need them to make the hidden tests
pass: those come from the test patch, which is applied after this, over whatever was restored. Files a fix
may change and that also configure the runner (`package.json`, `pom.xml`, `Cargo.toml`, `go.mod`, a
Makefile) stay as the patch made them: their test sections are what the log and exit-code cross-checks
and the canaries watch.

The report lists what was restored and why.
"""

from __future__ import annotations

import configparser
import re
import shlex
import sys
from pathlib import PurePosixPath

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.instances import patch_files
from uni_agent_gym.toolchains import PYTHON

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_NAMES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini")
_JS = ((r"(^|/)(__tests__|__mocks__|test|tests|spec)/", "it holds the tests or their helpers"),
       (r"\.(test|spec)\.[cm]?[jt]sx?$", "it is a test file"),
       (r"(^|/)(jest|vitest|vite|karma|playwright|cypress)\.config\.[cm]?[jt]s$|(^|/)karma\.conf\.[cm]?js$|(^|/)\.mocharc(\.\w+)?$|(^|/)\.babelrc$",
        "it configures the test runner"))  # fmt: skip
_TESTS_TREE = (r"(^|/)tests?/", "it holds the tests or their helpers")
RUNNER_FILES: dict[str, tuple[tuple[str, str], ...]] = {  # language -> (path pattern, why it goes back to the start)
    "go": ((r"_test\.go$", "it is a test file (a TestMain there decides what runs)"), (r"(^|/)testdata/", "the tests read it")),
    "c": (_TESTS_TREE,),
    "cpp": (_TESTS_TREE,),
    "rust": (_TESTS_TREE, (r"(^|/)\.cargo/config(\.toml)?$", "it configures cargo's test runs")),
    "java": ((r"(^|/)src/test/", "it holds the tests or their helpers"), (r"(^|/)\.mvn/", "it configures Maven's runs")),
    "javascript": _JS,
    "typescript": _JS,
    "php": (_TESTS_TREE, (r"(^|/)phpunit\.xml(\.dist)?$", "it configures phpunit")),
    "ruby": ((r"(^|/)(spec|test)/", "it holds the tests or their helpers"), (r"(^|/)\.rspec$", "it configures rspec")),
}


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


def language_runner_files(language: str, paths: list[str]) -> dict[str, str]:
    """{path: why} for the paths that hold tests or configure the runner of `language` (not Python's)."""
    rules = RUNNER_FILES.get(language, ())
    return {path: why for path in paths for pattern, why in reversed(rules) if re.search(pattern, path)}


async def runner_files_to_restore(deployment: Deployment, repo_dir: str, start: str, patch: str, test_command: str, language: str = PYTHON) -> dict[str, str]:
    """{path: why} for the files of the patch that must go back to `start` (see the module docstring)."""
    touched = patch_files(patch)
    runs = command_files(test_command)
    restore = {path: "the test command runs it" for path in touched if path in runs}
    if language != PYTHON:
        return {**language_runner_files(language, touched), **restore}
    for path in touched:
        name = PurePosixPath(path).name
        if name in CONFIG_NAMES:
            restore[path] = f"{name} configures the test runner"
        elif name.endswith((".pyc", ".pyo")) or "__pycache__" in PurePosixPath(path).parts:
            restore[path] = "compiled bytecode runs instead of its source"
        elif path in ("setup.cfg", "pyproject.toml"):
            before, after = await at_start_and_now(deployment, repo_dir, start, path)
            if pytest_section(path, before) != pytest_section(path, after):
                restore[path] = "its pytest section was changed"
    return restore


async def at_start_and_now(deployment: Deployment, repo_dir: str, start: str, path: str) -> tuple[str | None, str | None]:
    """A file of the repository as at `start` and as it is now (None where it does not exist)."""
    return (await _read(deployment, repo_dir, f"git show {shlex.quote(f'{start}:{path}')}"),
            await _read(deployment, repo_dir, f"cat -- {shlex.quote(path)}"))  # fmt: skip


async def _read(deployment: Deployment, repo_dir: str, command: str) -> str | None:
    result = await deployment.run(f"cd {shlex.quote(repo_dir)} && {command} 2>/dev/null", timeout=60)
    return result.output if result.exit_code == 0 else None
