"""The instance's Python environment for the `local` deployment: a venv on the host, made once.

What the offline image builder does inside an image, done on the host: a venv from an interpreter
of the spec's Python (from `env.interpreters`, else `pythonX.Y` on PATH), the spec's exact packages
(from the package index, as the host reaches it), the `pre_install` edits and the spec's install
command run in a fresh checkout of the start commit, then the environment commit and the snapshot of
the ignored files the install made, both kept in the instance's trusted repository
(`local_checkout.py`). An editable install points at the checkout, so the venv belongs to one
checkout path; a stamp records that path, the start commit and the environment commit, and every
later reset of the same instance is a fresh checkout of that commit. A copy of the venv as it was made
(`venv-pristine`) replaces a venv that an episode changed, in a second or two instead of a new install.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

from uni_agent_gym.config import PYTHON_AND_TEST_RUNNER_VARIABLES
from uni_agent_gym.deployments.local import inherited_environment
from uni_agent_gym.workspaces.local_checkout import recreate_checkout, record_environment, snapshot_path, trusted_git_dir
from uni_agent_gym.workspaces.host_git import has_commit, host_command
from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.specs import EnvironmentSpec, SpecError

STAMP = "uni-agent-gym-environment.json"
FILES = "uni-agent-gym-files.json"  # what the venv held when it was made, to tell whether an episode changed it
PRISTINE = "venv-pristine"  # beside the venv: a copy of it as it was made, which replaces a venv an episode changed
RECIPE = 2  # how venvs are made; a venv stamped with another is made again (2: pytest plugins' bytecode written)


def find_interpreter(python: str, interpreters: dict[str, str]) -> str:
    """The host interpreter for `python` ("3.9"): configured, else `python3.9` on PATH."""
    configured = interpreters.get(python)
    if configured:
        if not os.access(configured, os.X_OK):
            raise SpecError(f"env.interpreters[{python!r}] = {configured} is not an executable")
        return configured
    found = shutil.which(f"python{python}")
    if found is None:
        raise SpecError(f"No Python {python} interpreter on this host: set env.interpreters[{python!r}] to one")
    return found


async def _shell(command: str, cwd: str | Path, env: dict[str, str]) -> None:
    await host_command(["bash", "-c", command], cwd=cwd, env=env)


def venv_environment(venv: Path, spec: EnvironmentSpec) -> dict[str, str]:
    """Variables that make the venv (and the spec's variables) active."""
    return {**spec.env, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}"}


async def ensure_local_environment(
    spec: EnvironmentSpec, workspace: Path, repo_dir: str, start: str, interpreters: dict[str, str]
) -> str:
    """Make (or reuse) the instance's venv (`workspace/venv`) for the checkout at `repo_dir`; return the
    environment commit, which every reset checks out. Making it replaces `repo_dir` with a fresh
    checkout of `start`, installs there, and records the result in the trusted repository. One process
    makes it at a time (the others, such as verl's other workers, wait and then reuse it)."""
    async with machine_lock(f"local environment {Path(workspace).resolve()}"):
        return await _make_or_reuse(spec, workspace, repo_dir, start, interpreters)


async def _made_for(directory: Path, workspace: Path, wanted: dict) -> str | None:
    """The environment commit of the venv at `directory` if it was made for `wanted`, else None."""
    stamp_path = directory / STAMP
    if not (stamp_path.exists() and snapshot_path(workspace).exists()):
        return None
    stamp = json.loads(stamp_path.read_text())
    if {key: stamp.get(key) for key in wanted} == wanted and await has_commit(trusted_git_dir(workspace), stamp["environment_commit"]):
        return stamp["environment_commit"]
    return None


async def _make_or_reuse(spec: EnvironmentSpec, workspace: Path, repo_dir: str, start: str, interpreters: dict[str, str]) -> str:
    venv, pristine = workspace / "venv", workspace / PRISTINE
    wanted = {"repo_dir": repo_dir, "spec": asdict(spec), "start_commit": start, "recipe": RECIPE}
    commit = await _made_for(venv, workspace, wanted)
    if commit is not None:
        return commit
    if venv.exists():
        await asyncio.to_thread(shutil.rmtree, venv)
    commit = await _made_for(pristine, workspace, wanted)
    if commit is not None and await asyncio.to_thread(changed_files, pristine) == []:
        # an episode changed the venv (its stamp was dropped): a copy of it as it was made, not a new install
        await asyncio.to_thread(_copy_venv, pristine, venv, json.loads((pristine / STAMP).read_text()))
        return commit
    if pristine.exists():
        await asyncio.to_thread(shutil.rmtree, pristine)
    await recreate_checkout(workspace, start, Path(repo_dir))
    interpreter = find_interpreter(spec.python, interpreters)
    await host_command([interpreter, "-m", "venv", str(venv)], cwd=repo_dir)
    active = venv_environment(venv, spec)
    if spec.requirements:
        requirements = venv / "requirements.txt"
        requirements.write_text("\n".join(spec.requirements) + "\n")
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(requirements)]
        await host_command(pip, cwd=repo_dir, env=active)
    for command in spec.pre_install:
        await _shell(command, repo_dir, active)
    await _shell(spec.install, repo_dir, active)
    commit = await record_environment(workspace, repo_dir, start)
    await _write_pytest_plugin_bytecode(venv, active)
    # Every module compiled now, at each optimisation level (pytest's own tests run Python with -OO), so that
    # importing one later writes nothing: the venv must not change.
    for level in ([], ["-O"], ["-OO"]):
        await host_command([str(venv / "bin" / "python"), *level, "-m", "compileall", "-q", "-j", "0", str(venv / "lib")], cwd=repo_dir)
    stamp = {**wanted, "environment_commit": commit}
    await asyncio.to_thread(_copy_venv, venv, pristine, stamp)
    await asyncio.to_thread(_seal, venv, stamp)
    return commit


async def _write_pytest_plugin_bytecode(venv: Path, active: dict[str, str]) -> None:
    """pytest rewrites the asserts of the plugins it loads (entry points such as pytest-cov) and caches that
    bytecode beside them (`*.cpython-39-pytest-8.4.2.pyc`), so the first test run of an honest episode would
    write into the venv, which then counts as changed. One collection in an empty directory writes it now.
    A venv without pytest (or one whose plugins fail to load) is left as it is: its tests find that out."""
    environ = inherited_environment(list(PYTHON_AND_TEST_RUNNER_VARIABLES))  # the host's settings of pytest play no part
    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-collect-") as empty:
        process = await asyncio.create_subprocess_exec(
            str(venv / "bin" / "python"), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
            cwd=empty, env={**environ, **active},
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await process.wait()


def _copy_venv(source: Path, target: Path, stamp: dict) -> None:
    """A real copy of a venv at `target` (links stay links; no hard links, so an edit in place in one
    never reaches the other), sealed."""
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(FILES, STAMP))
    _seal(target, stamp)


def _seal(venv: Path, stamp: dict) -> None:
    """Record what the venv holds now (a copy's files have inodes and change times of their own), then its
    stamp, last: a venv with a stamp is complete."""
    (venv / FILES).write_text(json.dumps(venv_files(venv)))
    (venv / STAMP).write_text(json.dumps(stamp))


def venv_files(venv: Path) -> dict[str, list[int]]:
    """Size, modification and change times and inode of every file in the venv. Any write, chmod or
    replacement changes one of them, and a file's change time cannot be set back."""
    found = {}
    for directory, _, names in os.walk(venv):
        for name in names:
            path = os.path.join(directory, name)
            if name in (STAMP, FILES):
                continue
            stat = os.lstat(path)
            found[os.path.relpath(path, venv)] = [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]
    return found


def changed_files(venv: Path) -> list[str] | None:
    """The files of `venv` that changed since it was made (None: it holds no record of what it held)."""
    recorded = venv / FILES
    if not recorded.exists():
        return None
    before, now = json.loads(recorded.read_text()), venv_files(venv)
    return sorted(path for path in before.keys() | now.keys() if before.get(path) != now.get(path))


async def renew_tampered_venv(workspace: Path) -> dict[str, str]:
    """On `local` the venv is shared by every episode of an instance, so an episode could change what
    the tests run with (a plugin or `.pth` in site-packages, a replaced `bin/pytest`). If it changed,
    drop the stamp so that the next workspace replaces it (`_make_or_reuse`); {venv: why} for the report, or {}."""
    venv = Path(workspace) / "venv"
    changed = await asyncio.to_thread(changed_files, venv)
    if not changed:
        return {}
    (venv / STAMP).unlink(missing_ok=True)
    shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    return {str(venv): f"the episode changed {len(changed)} file(s) of the instance's venv ({shown}): restored before grading"}
