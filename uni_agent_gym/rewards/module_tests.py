"""The repository's tests of the modules a patch changes, as the row's runner names its tests (the differential
check's second run, `reward.differential_modules`).

Python: a changed file's module is its path below the packages above it (`src/flask/config.py` is `flask.config` where
`src` has no `__init__.py`). A test file (`test_*.py`, `*_test.py`, `tests.py`) tests it when one of its lines imports
it: `import M`, `from M import ...` (M or a module inside it), or `from <its package> import <its name>` on one line. A
name re-exported by the package (`from flask import Config`) is not followed: every test imports the package, so that
would be the whole suite. The files are found with git grep in a sandbox at the start state. The runner is given them
as it is given the row's own: pytest and sympy's `bin/test` by path, Django's `runtests.py` by test module (`tests/`
dropped), unittest by module; for any other command there is no second run (the report says so).
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards.patches import SAFE_GIT

TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|tests)\.py$")
TEST_FILE_GLOBS = ("**/test_*.py", "**/*_test.py", "**/tests.py")
_WORD_END = "([^[:alnum:]_]|$)"  # POSIX ERE (git grep -E) has no \b
# runner -> how the row's command, its last step, names it
RUNNERS = {"django": re.compile(r"runtests\.py"), "unittest": re.compile(r"-m\s+unittest\b"), "sympy": re.compile(r"\bbin/test\b"),
           "pytest": re.compile(r"\bpy\.?test\b")}  # fmt: skip


def changed_modules_files(patch: str) -> list[str]:
    """The Python files a patch changes that are not tests."""
    return [path for path in patch_files(patch) if path.endswith(".py") and not TEST_FILE.search(path)]


def module_name(path: str, packages: set[str]) -> str:
    """`path`'s import name, given the directories that are packages (hold an `__init__.py`): its path from below the
    highest directory above it that is not one."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts[-1] == "__init__":  # a package's own module: the package
        parts.pop()
    top = len(parts) - 1
    while top > 0 and "/".join(parts[:top]) in packages:
        top -= 1
    return ".".join(parts[top:])


def import_patterns(module: str) -> list[str]:
    """git grep -E patterns of a line that imports `module` (or a module inside it)."""
    dotted = module.replace(".", "[.]")  # module names are identifiers joined by dots: nothing else to escape
    patterns = [f"^[[:space:]]*import[[:space:]]+{dotted}{_WORD_END}", f"^[[:space:]]*from[[:space:]]+{dotted}{_WORD_END}"]
    package, _, name = module.rpartition(".")
    if package:
        patterns.append(f"^[[:space:]]*from[[:space:]]+{package.replace('.', '[.]')}[[:space:]]+import[[:space:]](.*[^[:alnum:]_])?{name}{_WORD_END}")
    return patterns


def runner_of(command: str) -> str | None:
    """The runner of the command's last step, where it is one whose tests can be named after the command (swebench's
    rule: the test patch's files go at its end)."""
    last = re.split(r";|&&|\|\|", command)[-1]
    return next((name for name, pattern in RUNNERS.items() if pattern.search(last)), None)


def directive(path: str, runner: str) -> str:
    """How `runner` is given the test file `path`."""
    if runner in ("pytest", "sympy"):
        return path
    module = path[: -len(".py")]
    if runner == "django" and module.startswith("tests/"):
        module = module[len("tests/") :]
    return module.replace("/", ".")


def command_with(command: str, files: list[str], runner: str) -> str:
    return " ".join([command.rstrip(), *(shlex.quote(directive(path, runner)) for path in files)])


async def importing_test_files(deployment: Deployment, repo_dir: str, patch: str) -> list[str]:
    """The test files of the repository in `deployment` (at its start state) that import a module `patch` changes."""
    changed = changed_modules_files(patch)
    if not changed:
        return []
    directories = sorted({str(parent) for path in changed for parent in PurePosixPath(path).parents if str(parent) != "."})
    probe = " ".join(shlex.quote(directory) for directory in directories)
    found = await deployment.run(f"cd {shlex.quote(repo_dir)} && for d in {probe}; do [ -f \"$d/__init__.py\" ] && printf '%s\\n' \"$d\"; done; true", timeout=120)
    packages = set(found.output.split())
    patterns = [pattern for path in changed for pattern in import_patterns(module_name(path, packages))]
    globs = " ".join(shlex.quote(f":(glob){glob}") for glob in TEST_FILE_GLOBS)
    grep = " ".join(f"-e {shlex.quote(pattern)}" for pattern in patterns)
    listed = await deployment.run(f"cd {shlex.quote(repo_dir)} && {SAFE_GIT} grep -l -E {grep} -- {globs}; true", timeout=300,
                                  output_limit=1_000_000)  # fmt: skip
    return sorted({line.strip() for line in listed.output.splitlines() if TEST_FILE.search(line.strip())})
