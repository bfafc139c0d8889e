"""A shell on this host, in a working directory.

This is NOT a security boundary: the agent's commands run as the host user with the host's files and
network. Use it for development, trusted models and the fastest possible loop; use `docker` otherwise.
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import logging
import os
import secrets
import shutil
import signal
import tempfile
from pathlib import Path

from uni_agent_gym.config import LocalDeploymentConfig
from uni_agent_gym.deployments.base import Deployment
from uni_agent_gym.deployments.session import READ_SIZE, ShellProcess

logger = logging.getLogger(__name__)


@functools.cache
def _warn_no_security_boundary() -> None:
    """Once per process: RL runs start thousands of deployments."""
    logger.warning("LocalDeployment runs commands directly on this host: it is not a security boundary")


class _LocalShell(ShellProcess):
    """bash as a child process, leader of its own session so its process tree can be killed."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    async def write(self, data: bytes) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(data)
        await self._process.stdin.drain()

    async def read(self) -> bytes:
        assert self._process.stdout is not None
        return await self._process.stdout.read(READ_SIZE)

    async def exit_code(self) -> int | None:
        return await self._process.wait()

    async def kill(self) -> None:
        if self._process.returncode is None:
            self._process.kill()
        await self._process.wait()


MARKER_VARIABLE = "UNI_AGENT_GYM_SANDBOX"


def inherited_environment(excluded: list[str]) -> dict[str, str]:
    """The host's environment less the variables matching `excluded`: what a docker container would not
    have either, so that local grading runs the tests as docker's does."""
    return {name: value for name, value in os.environ.items() if not any(fnmatch.fnmatchcase(name, p) for p in excluded)}


def kill_marked_processes(marker: str) -> list[int]:
    """SIGKILL every process of this user whose environment carries `MARKER_VARIABLE=marker`: what a
    sandbox started, including what left its session (`setsid`, double forks). A process that wipes
    its own environment escapes this; the local deployment is not a security boundary."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
        except OSError:  # gone, or not ours to read
            continue
    return killed


class LocalDeployment(Deployment):
    """Runs commands in a bash on this host; see the module docstring for why it is not a sandbox."""

    def __init__(self, config: LocalDeploymentConfig) -> None:
        super().__init__(config)
        self._workdir: str | None = None
        self._owns_workdir = False
        self._marker = secrets.token_hex(8)  # every process of this sandbox inherits it

    @property
    def workdir(self) -> str | None:
        return self._workdir or self.config.workdir

    async def _provision(self) -> None:
        _warn_no_security_boundary()
        if self.config.workdir:
            self._workdir = str(Path(self.config.workdir).resolve())
            await asyncio.to_thread(os.makedirs, self._workdir, exist_ok=True)
        else:
            self._workdir = await asyncio.to_thread(tempfile.mkdtemp, prefix="uni-agent-gym-")
            self._owns_workdir = True

    async def _spawn_shell(self) -> ShellProcess:
        process = await asyncio.create_subprocess_exec(
            "bash",
            "--noprofile",
            "--norc",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=self._workdir,
            env={**inherited_environment(self.config.host_env_excluded), **self.config.env, MARKER_VARIABLE: self._marker},
            start_new_session=True,
        )
        return _LocalShell(process)

    async def _run_beside(self, argv: list[str]) -> None:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        await process.wait()

    async def _release(self) -> None:
        await asyncio.to_thread(kill_marked_processes, self._marker)
        if self._owns_workdir and self._workdir:
            await asyncio.to_thread(shutil.rmtree, self._workdir, True)
        self._workdir, self._owns_workdir = None, False

    async def upload(self, local_path: str | Path, remote_path: str) -> None:
        self._require_session()
        source, target = Path(local_path), Path(self.resolve(remote_path))
        if not source.exists():
            raise FileNotFoundError(f"Nothing to upload at {source}")

        def copy() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)
            else:
                shutil.copy2(source, target)

        await asyncio.to_thread(copy)
