"""The deployment interface: where a sandbox lives (start, stop, is_alive) and the primitives on it.

Commands and file reads/writes go through a persistent `ShellSession`; each implementation only says
how to start the sandbox and how to open a shell process in it (and may move whole trees faster).
"""

from __future__ import annotations

import abc
import asyncio
import base64
import logging
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from uni_agent_gym.errors import DeploymentError, DeploymentNotStartedError, SandboxFileNotFoundError

if TYPE_CHECKING:
    from uni_agent_gym.deployments.session import ShellSession

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommandResult:
    """What one command did.

    `exit_code` is None when the command did not finish on its own (it timed out, or the shell died
    without an exit status). `truncated` says the output was capped (the elision is marked in it).
    `note` is the harness speaking, not the command (e.g. the shell was restarted), empty if nothing.
    """

    output: str
    exit_code: int | None
    timed_out: bool = False
    truncated: bool = False
    duration: float = 0.0
    note: str = ""


class Deployment(abc.ABC):
    """A sandbox with a persistent shell. Use `async with deployment:` or call `start()`/`stop()`.

    `stop()` is idempotent and safe after a crash; every other method needs a started deployment.
    """

    def __init__(self, config: Any) -> None:
        self.config = config
        self._session: ShellSession | None = None  # set by start() in subclasses

    # ----- lifecycle (per implementation) -----

    @abc.abstractmethod
    async def start(self) -> None:
        """Create the sandbox and open its shell session."""

    @abc.abstractmethod
    async def stop(self) -> None:
        """Release the sandbox; never raises for a sandbox that is already gone."""

    @abc.abstractmethod
    async def is_alive(self) -> bool:
        """Whether the sandbox exists and its shell can take commands."""

    # ----- files (through the shell by default, so every sandbox behaves the same) -----

    async def read_file(self, path: str) -> bytes:
        """The bytes of `path` in the sandbox; `SandboxFileNotFoundError` if there is none."""
        quoted = shlex.quote(self.resolve(path))
        result = await self._run_exact(
            f"if [ -d {quoted} ]; then printf 'E:directory'; elif [ ! -e {quoted} ]; then printf 'E:missing'; "
            f"else printf 'OK:' && base64 -w0 -- {quoted}; fi"
        )
        if result.output.startswith("E:missing"):
            raise SandboxFileNotFoundError(f"No such file in the sandbox: {path}")
        if result.output.startswith("E:directory"):
            raise IsADirectoryError(f"Expects a file, got a directory: {path}")
        if result.exit_code != 0 or not result.output.startswith("OK:"):
            raise DeploymentError(f"Cannot read {path}: {result.output.removeprefix('OK:').strip()[-500:]}")
        return base64.b64decode(result.output[3:])

    async def write_file(self, path: str, content: bytes | str) -> None:
        """Write `content` to `path`, creating parent directories; str is encoded as UTF-8."""
        target = self.resolve(path)
        data = content.encode() if isinstance(content, str) else bytes(content)
        encoded = base64.b64encode(data).decode()
        result = await self._run_exact(
            f"mkdir -p -- {shlex.quote(str(PurePosixPath(target).parent))} && "
            f"printf %s '{encoded}' | base64 -d > {shlex.quote(target)}"
        )
        if result.exit_code != 0:
            raise DeploymentError(f"Cannot write {path}: {result.output.strip()[-500:]}")

    async def upload(self, local_path: str | Path, remote_path: str) -> None:
        """Copy a host file or directory to `remote_path` in the sandbox."""
        source, target = Path(local_path), PurePosixPath(self.resolve(remote_path))
        if not source.exists():
            raise FileNotFoundError(f"Nothing to upload at {source}")
        if source.is_file():
            await self.write_file(str(target), await asyncio.to_thread(source.read_bytes))
            return
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            await self.write_file(str(target / file.relative_to(source).as_posix()), await asyncio.to_thread(file.read_bytes))
        await self._run_exact(f"mkdir -p -- {shlex.quote(str(target))}")

    async def _run_exact(self, command: str) -> CommandResult:
        """Run a harness command with no output cap (file contents must arrive whole)."""
        session = self._require_session()
        return await session.run(command, self.config.command_timeout, output_limit=None)

    # ----- commands (shared) -----

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run `command` in the persistent shell (cwd and exported variables carry over).

        Args:
            command: bash source; it may span lines. Its stdin is /dev/null, stderr is merged in.
            timeout: seconds before the command is interrupted inside the sandbox; the
                config's `command_timeout` when None.
        Returns:
            A `CommandResult`; a timeout is a result with `timed_out=True`, not an exception.
        Raises:
            DeploymentNotStartedError: before `start()` or after `stop()`.
            SandboxDiedError: the sandbox itself is gone.
        """
        session = self._require_session()
        return await session.run(command, self.config.command_timeout if timeout is None else timeout)

    async def _shell_answers(self) -> bool:
        """Whether the session runs a trivial command (the last step of every `is_alive`)."""
        if self._session is None:
            return False
        try:
            result = await self._session.run("true", self.config.startup_timeout)
        except DeploymentError:
            return False
        return result.exit_code == 0

    def _require_session(self) -> ShellSession:
        if self._session is None:
            raise DeploymentNotStartedError(f"{type(self).__name__} needs start() first (or was stopped)")
        return self._session

    def resolve(self, path: str) -> str:
        """An absolute sandbox path: relative paths are taken from the configured working directory."""
        if PurePosixPath(path).is_absolute():
            return path
        base = self.workdir
        if base is None:
            raise ValueError(f"Expects an absolute path (no workdir is configured), got {path!r}")
        return str(PurePosixPath(base) / path)

    @property
    def workdir(self) -> str | None:
        return self.config.workdir

    async def __aenter__(self) -> "Deployment":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _close_session(self) -> None:
        """Close the shell session, logging (not raising) a failure: stop() must always finish."""
        session, self._session = self._session, None
        if session is not None:
            try:
                await asyncio.wait_for(session.close(), 10)
            except Exception as exc:  # noqa: BLE001 - cleanup boundary: record and go on
                logger.warning("closing the shell session failed: %s", exc)
