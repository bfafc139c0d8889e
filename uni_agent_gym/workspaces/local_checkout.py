"""Local workspaces: every reset (and every fresh grading) starts from a fresh checkout.

The agent owns its checkout's `.git` (hooks, config, refs, objects, index), so nothing of it is reused.
Per instance, `env.cache_dir/workspaces/<id>/` keeps what is trusted, made once:
- `origin.git`: a bare repository with the clean history (`history.py`) under `refs/heads/start`
  and, for instances with an environment, the environment commit (the `pre_install` edits and the
  install's tracked output) under `refs/heads/environment`;
- `ignored-files.tar`: the files git ignores that the install left in the checkout (`*.egg-info`,
  setuptools-scm's `_version.py`, extensions built in place), bytecode aside;
- `venv/` (`local_venv.py`), whose editable install points at the checkout's path.
`recreate_checkout` replaces the checkout with a new one of a commit from `origin.git` plus the
snapshot, at the same path. Objects are hard-linked from `origin.git`: git never writes an object
file in place, so only a deliberate write through the link reaches it, and on `local` the agent can
write `origin.git` directly anyway (not a security boundary).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from pathlib import Path

from uni_agent_gym.config import GymConfig
from uni_agent_gym.workspaces.history import CleanHistory, fresh_checkout, link_objects
from uni_agent_gym.workspaces.host_git import FIXED_IDENTITY, WorkspaceError, git, host_command
from uni_agent_gym.named_locks import machine_lock

SNAPSHOT = "ignored-files.tar"
MARKER = "uni-agent-gym-checkout"  # in a checkout's .git: made here, so a reset may replace it
ENVIRONMENT_MESSAGE = "uni-agent-gym environment"


def local_workspace_dir(instance_id: str, config: GymConfig) -> Path:
    """Where the local deployment keeps an instance's trusted repository, snapshot, venv and checkout."""
    return Path(config.env.cache_dir).expanduser() / "workspaces" / instance_id.replace("/", "_")


def trusted_git_dir(workspace: Path) -> Path:
    """The instance's trusted bare repository: the start commit's clean history and the environment
    commit; no agent's git ever wrote to it."""
    return Path(workspace) / "origin.git"


def snapshot_path(workspace: Path) -> Path:
    """The tar of the ignored files the install left in the checkout (absent without an environment)."""
    return Path(workspace) / SNAPSHOT


async def ensure_trusted_repository(workspace: Path, history: CleanHistory) -> None:
    """Make `origin.git` from the clean history unless it already starts at `history.start` (a new
    start commit, such as another `env.history`, makes it anew, dropping the environment commit)."""
    trusted = trusted_git_dir(workspace)
    async with machine_lock(f"trusted repository {trusted.resolve()}"):
        try:
            if (await git("--git-dir", str(trusted), "rev-parse", "refs/heads/start")).strip() == history.start:
                return
        except WorkspaceError:
            pass
        workspace.mkdir(parents=True, exist_ok=True)
        building = trusted.with_name(f"{trusted.name}.tmp-{secrets.token_hex(4)}")
        try:
            await git("init", "--bare", "--quiet", str(building))
            await asyncio.to_thread(link_objects, history.git_dir / "objects", building / "objects")
            await git("--git-dir", str(building), "update-ref", "refs/heads/start", history.start)
            await git("--git-dir", str(building), "symbolic-ref", "HEAD", "refs/heads/start")
            if trusted.exists():
                await asyncio.to_thread(shutil.rmtree, trusted)
            os.replace(building, trusted)
        finally:
            if building.exists():
                await asyncio.to_thread(shutil.rmtree, building, True)


async def record_environment(workspace: Path, repo_dir: str | Path, start: str) -> str:
    """After the install in a fresh checkout of `start`: commit its files (ignored ones aside) into
    `origin.git` as the environment commit, snapshot the ignored ones; return the commit.

    The commit is made by the trusted repository reading the checkout's files (`--work-tree`), not
    by the checkout's own git."""
    trusted = str(trusted_git_dir(workspace))
    tree_git = ["--git-dir", trusted, "--work-tree", str(repo_dir)]
    index = Path(workspace) / f"index.tmp-{secrets.token_hex(4)}"
    listing = Path(workspace) / f"ignored.tmp-{secrets.token_hex(4)}"
    snapshot = snapshot_path(workspace)
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        await git(*tree_git, "read-tree", start, env=env)
        await git(*tree_git, "add", "-A", env=env)
        tree = (await git(*tree_git, "write-tree", env=env)).strip()
        commit = (await git("--git-dir", trusted, "commit-tree", tree, "-p", start, "-m", ENVIRONMENT_MESSAGE, env=FIXED_IDENTITY)).strip()
        await git("--git-dir", trusted, "update-ref", "refs/heads/environment", commit)
        listing.write_text(await git(*tree_git, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", env=env))
        await host_command(["tar", "-cf", f"{snapshot}.tmp", "--exclude=__pycache__", "-C", str(repo_dir), "--null", "-T", str(listing)])
        os.replace(f"{snapshot}.tmp", snapshot)
    finally:
        index.unlink(missing_ok=True)
        listing.unlink(missing_ok=True)
    return commit


def is_replaceable(repo_dir: Path, workspace: Path) -> bool:
    """Whether a reset may remove `repo_dir`: absent, empty, a checkout made here, or under the instance's workspace."""
    if repo_dir.is_symlink():
        return False
    if not repo_dir.exists() or not any(repo_dir.iterdir()):
        return True
    return (repo_dir / ".git" / MARKER).is_file() or Path(workspace).resolve() in repo_dir.resolve().parents


async def recreate_checkout(workspace: Path, commit: str, repo_dir: Path) -> None:
    """Replace `repo_dir` with a fresh checkout of `commit` from the instance's trusted repository plus
    the ignored-files snapshot: HEAD detached at `commit`, no remote, ref, reflog or later history.
    The old directory is removed (`WorkspaceError` if it is not a checkout made here)."""
    workspace, repo_dir = Path(workspace), Path(repo_dir)
    if not is_replaceable(repo_dir, workspace):
        raise WorkspaceError(
            f"The local workdir {repo_dir} is neither empty nor a git checkout that uni-agent-gym made: "
            "empty it or choose another workdir"
        )
    if repo_dir.exists():  # moved aside and deleted while the new checkout is made (a leftover of a crash too)
        os.rename(repo_dir, repo_dir.with_name(f".{repo_dir.name}.old-{secrets.token_hex(4)}"))
    old = list(repo_dir.parent.glob(f".{repo_dir.name}.old-*")) if repo_dir.parent.exists() else []
    deletion = asyncio.ensure_future(asyncio.to_thread(lambda: [shutil.rmtree(path, ignore_errors=True) for path in old]))
    try:
        await fresh_checkout(trusted_git_dir(workspace), commit, repo_dir)
        (repo_dir / ".git" / MARKER).touch()
        snapshot = snapshot_path(workspace)
        if snapshot.exists():
            await host_command(["tar", "-C", str(repo_dir), "-xf", str(snapshot)])
    finally:
        await deletion
