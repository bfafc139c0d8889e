"""The host's git and programs, as the workspace code runs them.

Git runs with nothing of a repository's own configuration taking part (`safe.directory=*` for sdists
unpacked with their tarball's owner, `--no-replace-objects` so a mirror's replace refs cannot swap one
commit's files for another's); commits made here carry a fixed identity and date, so the same files
always give the same commit.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from uni_agent_gym.errors import UniAgentGymError

FIXED_IDENTITY = {
    "GIT_AUTHOR_NAME": "uni-agent-gym fixtures",
    "GIT_AUTHOR_EMAIL": "fixtures@uni-agent-gym.invalid",
    "GIT_COMMITTER_NAME": "uni-agent-gym fixtures",
    "GIT_COMMITTER_EMAIL": "fixtures@uni-agent-gym.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


class WorkspaceError(UniAgentGymError, RuntimeError):
    """The repository of an instance cannot be put into the sandbox."""


async def host_command(argv: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a program on the host and return its stdout; `WorkspaceError` with the end of its output on failure."""
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    if process.returncode != 0:
        output = (out + err).decode(errors="replace").strip()
        raise WorkspaceError(f"`{' '.join(argv)[:200]}` failed ({process.returncode}):\n{output[-3000:]}")
    return out.decode(errors="replace")


async def git(*args: str, cwd: str | Path | None = None, env: dict[str, str] | None = None) -> str:
    """Host git that accepts repositories of any owner (unpacked sdists keep their tarball's owner) and
    reads objects as stored (a mirror's replace refs could otherwise swap one commit's files for another's)."""
    return await host_command(["git", "--no-replace-objects", "-c", "safe.directory=*", *args], cwd=cwd, env=env)


async def has_commit(repository: Path, commit: str) -> bool:
    """Whether the repository (a git dir) holds `commit`."""
    try:
        await git("--git-dir", str(repository), "cat-file", "-e", f"{commit}^{{commit}}")
        return True
    except WorkspaceError:
        return False
