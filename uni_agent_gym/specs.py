"""The environment an instance needs: Python version, exact packages, install command, test command.

It comes from the recipe a row carries (SWE-rebench's `install_config`, see `datasets/swe_rebench.py`)
or from the `swebench` package's specs (`MAP_REPO_VERSION_TO_SPECS`, swebench 4.1.0: 5.x dropped
it), optionally overridden per instance by an environments file. Overrides matter offline: many specs
install a `requirements.txt` or `environment.yml` fetched from GitHub at build time, and unpinned
dependencies resolve today to releases the old code cannot run with. An environments file is a JSON
list (or `{"instances": [...]}`) of objects with `instance_id`, `python`, `pip_requirements` (exact
pins), and optionally `build_requirements`, `install_cmd`, `pre_install`, `env`, and `test_cmd` (the
runner; the test_patch's files are appended) or `test_cmd_as_run` (the whole command); the offline
fixtures' `fixtures.json` has this shape.

A task in another language (its `language`, see `toolchains.py`) has no venv: its environment is its
toolchain (Debian packages, plus the spec's `apt-pkgs`), the spec's `pre_install`, `install` and
`build` run once in the image, and `build` again when grading, after the test patch and before the
tests, as swebench's eval scripts do. Its overrides give `toolchain` (extra packages), `toolchain_setup`
(commands run after them in the toolchain image, the one step with the network: a Debian source
package's build files, say), `pre_install`, `install_cmd`, `build_cmd`, `test_cmd_as_run` and `env`;
its test command is the spec's `test_cmd` as written (swebench's non-Python specs name their tests).
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uni_agent_gym import swebench4
from uni_agent_gym.datasets import Task
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.files import read_text
from uni_agent_gym.swebench4.test_commands import get_test_directives
from uni_agent_gym.toolchains import PYTHON, TOOLCHAIN_PYTHON, ToolchainError, language_of, network_step, toolchain_packages


class SpecError(UniAgentGymError, LookupError):
    """No usable environment is known for an instance; the message says what to supply."""


@dataclass(frozen=True)
class EnvironmentSpec:
    """What to install for one instance, and where it came from."""

    python: str  # major.minor, e.g. "3.9"
    requirements: list[str]
    install: str
    test_command: str  # for this instance: the runner and its test files
    build_requirements: list[str] = field(default_factory=list)
    pre_install: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    source: str = ""
    language: str = PYTHON
    toolchain: list[str] = field(default_factory=list)  # Debian packages (other languages than Python)
    toolchain_setup: list[str] = field(default_factory=list)  # commands run in the toolchain image, with the network
    build: str = ""  # run when grading, after the test patch and before the tests ("" = nothing to build)


@dataclass(frozen=True)
class Commands:
    """The commands an instance image records (`workspaces/recorded_environment.py`), which grading runs for a task that
    leaves its commands to the defaults: its test command (None: it records none, the spec's is run) and the build run
    after the patches ("": none). An opened sandbox's `Episode` carries them; the task is never rewritten with them."""

    test_command: str | None
    build_command: str


def load_environments(path: str | Path | None) -> dict[str, dict[str, Any]]:
    """Per-instance overrides from an environments file, by instance id ({} without a file). Read once per version of
    the file (its size and modification time): every sandbox opened and every grading asks for it. The dicts are
    shared: read them, do not change them. A key neither read (`ENVIRONMENT_KEYS`) nor a note (`NOTE_KEYS`) is a
    `SpecError` naming it: a typo'd key would build another environment than the one written."""
    if path is None:
        return {}
    try:
        stat = os.stat(path)
    except OSError:
        return _read_environments(str(path))  # says what is wrong with the path
    return _read_environments(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _read_environments(path: str, mtime_ns: int = 0, size: int = 0) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(read_text(path, "Environments file", SpecError))
    except json.JSONDecodeError as exc:
        raise SpecError(f"Environments file {path} is not valid JSON: {exc}") from None
    items = data.get("instances", data) if isinstance(data, dict) else data
    if isinstance(items, dict) and all(isinstance(value, dict) for value in items.values()):  # {instance_id: entry}
        items = [{"instance_id": key, **value} for key, value in items.items()]
    if not isinstance(items, list) or not all(isinstance(item, dict) and "instance_id" in item for item in items):
        raise SpecError(f'Environments file {path}: expects a list of objects with an instance_id, or {{"instances": [...]}}')
    unknown = [f"{key!r} at the top" for key in (data if isinstance(data, dict) and "instances" in data else {}) if key not in ("instances", *NOTE_KEYS)]
    unknown += [f"{key!r} in {item['instance_id']!r}{_meant(key)}" for item in items for key in item if key not in (*ENVIRONMENT_KEYS, *NOTE_KEYS)]
    if unknown:
        raise SpecError(
            f"Environments file {path}: unknown key(s) {'; '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}. An entry's keys: "
            f"{', '.join(ENVIRONMENT_KEYS)}; notes for its reader, not read: {', '.join(NOTE_KEYS)}"
        )
    return {item["instance_id"]: item for item in items}


# What an environments entry gives (the module docstring says what each is for).
ENVIRONMENT_KEYS = ("instance_id", "python", "pip_requirements", "build_requirements", "install_cmd", "pre_install", "env", "test_cmd",
                    "test_cmd_as_run", "toolchain", "toolchain_setup", "build_cmd")  # fmt: skip
# Keys that describe an entry (or the file) for its reader and are not read: notes, and what the suite's offline fixtures
# record of each instance (../shared/swebench/fixtures.json: the sdist and commit of its base, its test counts and time).
NOTE_KEYS = ("notes", "why", "repo", "base_commit", "sdist", "n_fail_to_pass", "n_pass_to_pass", "test_seconds_gold", "fuzz_needed_to_rebase")


def _meant(key: str) -> str:
    """What an unknown key of an entry was probably meant as: a known key spelt alike, or a column of the row."""
    import dataclasses
    import difflib

    close = difflib.get_close_matches(key, ENVIRONMENT_KEYS, n=1)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if key in {field.name for field in dataclasses.fields(Task)}:
        return " (a column of the row: give it in the dataset)"
    return ""


def _major_minor(version: str) -> str:
    return ".".join(str(version).split(".")[:2])


def _with_directives(test_cmd: str | list[str] | None, instance: Task, test_patch: str | None = None) -> str:
    """The spec's test command followed by the test files of the test patch (the instance's, or `test_patch`: the one
    its sandbox's start state made), swebench's rule."""
    if not test_cmd:
        raise SpecError(f"Instance {instance.instance_id!r}: no test command (override test_cmd or swebench spec)")
    command = "; ".join(test_cmd) if isinstance(test_cmd, list) else test_cmd
    row = instance.to_dict() if test_patch is None else {**instance.to_dict(), "test_patch": test_patch}
    return " ".join([command, *get_test_directives(row)])  # swebench's function reads the row


def swebench_spec(repo: str, version: str) -> dict[str, Any] | None:
    """swebench 4.1.0's spec of a repo at a version (`swebench4`: 5.x dropped the tables), or None."""
    return swebench4.spec(repo, version)


def _joined(commands: str | list[str] | None, separator: str) -> str:
    return separator.join(commands) if isinstance(commands, list) else (commands or "")


def command_of_tests(
    instance: Task, environments: dict[str, dict[str, Any]] | None = None, *, recorded: Commands | None = None, test_patch: str | None = None
) -> str:
    """The instance's test command: its environments-file override, else its family's (the row's own, or
    a table the family follows; `recorded`: what its image records, for a task that leaves it to the defaults),
    else its swebench spec's runner followed by the test patch's files (`test_patch`: the one its sandbox's start
    state made, else the task's; another language's spec: its test command as written)."""
    override = (environments or {}).get(instance.instance_id) or {}
    if override.get("test_cmd_as_run"):
        return override["test_cmd_as_run"]
    if override.get("test_cmd"):
        return _with_directives(override["test_cmd"], instance, test_patch)
    own = recorded.test_command if recorded is not None else instance.test_command
    if own:
        return own
    spec = swebench_spec(instance.repo, str(instance.version)) or {}
    if language_of(instance) != PYTHON:
        if not spec.get("test_cmd"):
            raise SpecError(f"Instance {instance.instance_id!r}: no test command (override test_cmd_as_run or swebench spec)")
        return _joined(spec["test_cmd"], "; ")
    return _with_directives(spec.get("test_cmd"), instance, test_patch)


def build_of_tests(instance: Task, environments: dict[str, dict[str, Any]] | None = None, *, recorded: Commands | None = None) -> str:
    """What grading builds after the test patch and before the tests ("" for a Python task): the
    override's `build_cmd`, else the task's `build_command` (`recorded`: its image's, for a task that leaves it to
    the defaults), else its swebench spec's `build`."""
    if language_of(instance) == PYTHON:
        return ""
    override = (environments or {}).get(instance.instance_id) or {}
    if "build_cmd" in override:
        return _joined(override["build_cmd"], " && ")
    own = recorded.build_command if recorded is not None else instance.build_command
    if own is not None:
        return own
    spec = swebench_spec(instance.repo, str(instance.version)) or {}
    return _joined(spec.get("build"), " && ")


def environment_spec(instance: Task, environments: dict[str, dict[str, Any]] | None = None) -> EnvironmentSpec:
    """The environment of `instance`: its override if there is one, else the recipe its row carries (SWE-rebench),
    else its swebench spec."""
    instance_id, repo = instance.instance_id, instance.repo
    version = str(instance.version)
    spec = swebench_spec(repo, version) or {}
    override = (environments or {}).get(instance_id)
    recipe = instance.environment
    if override is None and recipe is not None and recipe.get("unbuildable"):
        raise SpecError(f"Instance {instance_id!r}: its environment cannot be built offline: {recipe['unbuildable']}")  # it says what to do
    if language_of(instance) != PYTHON:
        return _toolchain_spec(instance, spec, override, environments)
    if override is None and recipe is not None:
        override, source = recipe, "the row's install_config"
    else:
        source = "environments file"
    if override is not None:
        if "python" not in override or "pip_requirements" not in override:
            raise SpecError(f"Instance {instance_id!r}: its environment override needs 'python' and 'pip_requirements'")
        install = override.get("install_cmd") or spec.get("install")
        if not install:
            raise SpecError(f"Instance {instance_id!r}: no install command (override install_cmd or swebench spec)")
        return EnvironmentSpec(
            python=_major_minor(override["python"]),
            requirements=list(override["pip_requirements"]),
            install=install,
            test_command=command_of_tests(instance, environments),
            build_requirements=list(override.get("build_requirements") or []),
            pre_install=list(override.get("pre_install") or []),
            env=dict(override.get("env") or {}),
            source=source,
        )
    if not spec:
        raise SpecError(
            f"Instance {instance_id!r}: swebench has no spec for {repo} version {version}; "
            "give its environment in an environments file"
        )
    packages = spec.get("packages", "")
    if packages in ("requirements.txt", "environment.yml"):
        raise SpecError(
            f"Instance {instance_id!r}: the swebench spec of {repo} {version} installs {packages} from GitHub, "
            "which needs the network and resolves unpinned versions; give exact pins in an environments file"
        )
    return EnvironmentSpec(
        python=_major_minor(spec["python"]),
        requirements=list(spec.get("pip_packages", [])) + packages.split(),
        install=spec["install"],
        test_command=command_of_tests(instance, environments),
        pre_install=list(spec.get("pre_install", [])),
        source="swebench spec",
    )


def _toolchain_spec(
    instance: Task, spec: dict[str, Any], override: dict[str, Any] | None, environments: dict[str, dict[str, Any]] | None
) -> EnvironmentSpec:
    """The environment of a task in another language than Python: its toolchain, and what the image runs
    once in the repository (swebench's repo script: `pre_install`, `install`, `build`)."""
    instance_id, language = instance.instance_id, language_of(instance)
    override = override or {}
    if not spec and not override:
        raise SpecError(
            f"Instance {instance_id!r}: swebench has no spec for {instance.repo} version {instance.version}; "
            "give its toolchain, install_cmd, build_cmd and test_cmd_as_run in an environments file"
        )
    try:
        packages = toolchain_packages(language, [*spec.get("apt-pkgs", []), *override.get("toolchain", [])])
    except ToolchainError as exc:
        raise SpecError(f"Instance {instance_id!r}: {exc}") from None
    pre_install = list(override.get("pre_install") or spec.get("pre_install") or [])
    install = _joined(override["install_cmd"], " && ") if "install_cmd" in override else _joined([*spec.get("install", []), *spec.get("build", [])], " && ")
    build = build_of_tests(instance, environments)
    env = dict(override.get("env") or {})
    fetching = next(filter(None, (network_step(step, env) for step in [*pre_install, install, build])), None)
    if fetching:
        from uni_agent_gym.toolchains import offline_way

        way = offline_way(fetching)
        raise SpecError(
            f"Instance {instance_id!r}: its environment cannot be built offline: `{fetching}` fetches from the network, and images "
            "build with it off; give offline install steps in an environments file (toolchain, install_cmd, build_cmd, env)"
            f"{f': {way}' if way else ''}, or run it on its own image (env.workspace: image)"
        )
    return EnvironmentSpec(
        python=TOOLCHAIN_PYTHON,
        requirements=[],
        install=install or "true",
        test_command=command_of_tests(instance, environments),
        pre_install=pre_install,
        env=env,
        source="environments file" if override else "swebench spec",
        language=language,
        toolchain=packages,
        toolchain_setup=list(override.get("toolchain_setup") or []),
        build=build,
    )
