"""Mirrors: a bare repository under the cache directory per repo, cloned once from a local git
repository, a git bundle, a clone URL, or a plain directory (committed with a fixed identity and date).
The agent never sees a mirror: its repository is made from the start commit's clean history (`history.py`).

A plain directory is committed whole, ignored files too (an unpacked sdist's files are its files, whatever its
`.gitignore` says), except the bytecode of one shipped inside a Python package (the toy's `repo/`): pip
byte-compiles every `.py` file a wheel installs, package data included, so an installed toy holds `__pycache__/`
that a checkout does not, and its commit would differ from one install to the next.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from pathlib import Path

from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.workspaces.host_git import FIXED_IDENTITY, git, has_commit

# what a plain directory shipped in a package leaves out of its commit: the bytecode Python and pip write beside it
BYTECODE = ":(exclude,glob)**/__pycache__/**"


def _is_git_source(source: str) -> bool:
    path = Path(source)
    return not path.exists() or path.is_file() or (path / ".git").exists() or (path / "HEAD").is_file()


def _pathspec(source: str) -> list[str]:
    """What a plain directory's commit holds: everything, or for package data everything but its bytecode."""
    return ["--", ".", BYTECODE] if (Path(source).resolve().parent / "__init__.py").is_file() else []


async def mirror_repository(repo: str, source: str, cache_dir: str, commit: str | None = None) -> Path:
    """A bare repository under the cache holding `source`'s history, made once per repo; a git source
    is fetched again when the cache lacks `commit` (the source gained branches since)."""
    cache = Path(cache_dir).expanduser() / "mirrors" / f"{repo.replace('/', '__')}.git"
    plain_directory = not _is_git_source(source)
    async with machine_lock(f"mirror {cache.resolve()}"):
        if cache.exists() and plain_directory and await _directory_changed(cache, source):
            await asyncio.to_thread(shutil.rmtree, cache)
        if cache.exists():
            if commit and not plain_directory and not await has_commit(cache, commit):
                await git("--git-dir", str(cache), "fetch", "--quiet", source, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
            return cache
        cache.parent.mkdir(parents=True, exist_ok=True)
        building = cache.with_name(f"{cache.name}.tmp-{secrets.token_hex(4)}")
        try:
            if not plain_directory:
                await git("clone", "--bare", "--quiet", source, str(building))
            else:  # a plain directory: one commit of all its files, with a fixed identity and date
                await git("init", "--bare", "--quiet", str(building))
                tree = ["--git-dir", str(building), "--work-tree", str(Path(source).resolve())]
                await git(*tree, "add", "-A", "-f", *_pathspec(source))
                await git(*tree, "commit", "--quiet", "-m", "base", env=FIXED_IDENTITY)
            os.replace(building, cache)
        finally:
            if building.exists():
                await asyncio.to_thread(shutil.rmtree, building, True)
    return cache


async def _directory_changed(cache: Path, source: str) -> bool:
    """Whether a plain-directory mirror's files differ from the commit made of them (for package data: or the
    commit holds bytecode, as one made before it was left out did)."""
    pathspec = _pathspec(source)
    status = await git("--git-dir", str(cache), "--work-tree", str(Path(source).resolve()), "status", "--porcelain", *pathspec)
    if pathspec and not status.strip():
        names = (await git("--git-dir", str(cache), "ls-tree", "-r", "--name-only", "HEAD")).splitlines()
        return any("__pycache__" in name.split("/") for name in names)
    return bool(status.strip())


async def head_commit(cache: Path) -> str:
    """The commit HEAD of a mirror points to."""
    return (await git("--git-dir", str(cache), "rev-parse", "HEAD")).strip()
