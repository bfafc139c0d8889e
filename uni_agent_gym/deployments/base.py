"""The deployment interface: where a sandbox lives (start, stop, is_alive) and the primitives on it.

Commands and file reads/writes go through a persistent `ShellSession`; each implementation only says
how to start the sandbox and how to open a shell process in it (and may move whole trees faster).
"""

from __future__ import annotations

import abc
import asyncio
import base64
import io
import logging
import secrets
import shlex
import tarfile
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Any

from uni_agent_gym.deployments.container import ContainerSandbox
from uni_agent_gym.deployments.session import CommandResult, ShellProcess, ShellSession
from uni_agent_gym.errors import DeploymentError, DeploymentNotStartedError, SandboxFileNotFoundError

__all__ = ["CommandResult", "Deployment"]

logger = logging.getLogger(__name__)

UPLOAD_CHUNK = 1 << 20  # archive bytes per shell command


def _gzipped_tar(directory: Path) -> bytes:
    """`directory`'s contents as a gzipped tar, paths relative to it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for path in sorted(directory.iterdir()):
            tar.add(path, arcname=path.name)
    return buffer.getvalue()


class Deployment(abc.ABC):
    """A sandbox with a persistent shell. Use `async with deployment:` or call `start()`/`stop()`.

    `stop()` is idempotent and safe after a crash; every other method needs a started deployment.
    """

    def __init__(self, config: Any) -> None:
        self.config = config
        self._session: ShellSession | None = None
        self._on_stop: list[Callable[[], Awaitable[Any]]] = []
        # what releasing the sandbox found, {path: why} (a local venv the episode changed): for the reward's report
        self.release_report: dict[str, str] = {}
        self.pool: Any = None  # the warm pool it came from (`pool.py`), which takes it back when released

    def on_stop(self, callback: Callable[[], Awaitable[Any]]) -> None:
        """Await `callback` once, after the sandbox is released (what was held for it: a workspace's lock)."""
        self._on_stop.append(callback)

    # ----- lifecycle: the shared policy -----

    async def start(self) -> None:
        """Create the sandbox and open its shell session (a no-op when started)."""
        if self._session is not None:
            return
        await self._provision()
        try:
            self._session = await self._open_session()
        except BaseException:
            await self._release()
            raise

    async def _open_session(self) -> ShellSession:
        session = ShellSession(
            self._spawn_shell,
            self._run_beside,
            output_limit=self.config.output_limit,
            startup_timeout=self.config.startup_timeout,
            workdir=self.workdir,
        )
        await session.start()
        return session

    async def restart_shell(self) -> None:
        """A fresh shell session in the same sandbox: the old session's processes, variables, functions
        and working directory are gone (what a reused sandbox needs)."""
        session, self._session = self._require_session(), None
        await session.close()
        self._session = await self._open_session()

    async def stop(self) -> None:
        """Release the sandbox; idempotent, and never raises for a sandbox that is already gone."""
        session, self._session = self._session, None
        if session is not None:
            try:
                await asyncio.wait_for(session.close(), 30)
            except Exception as exc:  # noqa: BLE001 - cleanup boundary: record and go on
                logger.warning("closing the shell session failed: %s", exc)
        try:
            await self._release()
        finally:
            callbacks, self._on_stop = self._on_stop, []
            for callback in callbacks:
                await callback()

    async def is_alive(self) -> bool:
        """Whether the sandbox exists and its shell runs a trivial command."""
        if self._session is None:
            return False
        try:
            result = await self._session.run("true", self.config.startup_timeout)
        except DeploymentError:
            return False
        return result.exit_code == 0

    async def engine_answers(self) -> bool:
        """Whether what runs the sandbox (the host, the Docker engine, Modal's API) still answers. A sandbox
        that died while its engine answers died of what ran in it; one whose engine is gone, of the
        infrastructure. The host always answers (local)."""
        return True

    @property
    def container(self) -> "ContainerSandbox | None":
        """The sandbox as a container the gym's engine drives (its diff, archives, pause), or None where it is
        no such container (local, modal): `deployments/container.py`."""
        return None

    def beside(self) -> dict[str, Any]:
        """Config changes that place another sandbox where this one is (its node in a cluster), so the
        grader's fresh sandbox can read this one's changes; none where every sandbox is alike (the default)."""
        return {}

    async def isolate_network(self) -> bool:
        """Cut the running sandbox off every network; False where the deployment cannot (local, modal)."""
        return False

    # ----- per implementation: where the sandbox lives -----

    @abc.abstractmethod
    async def _provision(self) -> None:
        """Create the sandbox (container, directory, Modal sandbox)."""

    @abc.abstractmethod
    async def _release(self) -> None:
        """Remove the sandbox; must not raise when it is gone already."""

    @abc.abstractmethod
    async def _spawn_shell(self) -> ShellProcess:
        """Start `bash --noprofile --norc` in the sandbox with stdin and merged stdout/stderr piped."""

    @abc.abstractmethod
    async def _run_beside(self, argv: list[str]) -> None:
        """Run a short command in the sandbox beside the shell (used to kill a command's processes)."""

    # ----- files (through the shell by default, so every sandbox behaves the same) -----

    async def read_file(self, path: str) -> bytes:
        """The bytes of `path` in the sandbox; `SandboxFileNotFoundError` if there is none."""
        quoted = shlex.quote(self.resolve(path))
        result = await self._read_existing_file(path, f"printf 'OK:' && base64 -w0 -- {quoted}")
        if result.exit_code != 0 or not result.output.startswith("OK:"):
            raise DeploymentError(f"Cannot read {path}: {result.output.removeprefix('OK:').strip()[-500:]}")
        return base64.b64decode(result.output[3:])

    async def read_text(self, path: str) -> str:
        """The UTF-8 text of `path`, read by shell builtins in one round trip (no process is started,
        so it costs about what `true` does); files with NUL bytes or invalid UTF-8 go through the exact
        `read_file`, and `UnicodeDecodeError` says when they are not text."""
        quoted = shlex.quote(self.resolve(path))
        result = await self._read_existing_file(
            path,
            f"if [ ! -r {quoted} ]; then printf 'E:other'; elif __uag_text=; IFS= read -r -d '' __uag_text < {quoted}; "
            f"then printf 'E:other'; else printf 'OK:%s' \"$__uag_text\"; fi; unset __uag_text",
        )
        if result.exit_code == 0 and result.output.startswith("OK:") and "\ufffd" not in result.output:
            return result.output[3:]
        return (await self.read_file(path)).decode("utf-8")  # binary, unreadable or not UTF-8: read exactly

    async def _read_existing_file(self, path: str, reader: str) -> CommandResult:
        """Run the shell code `reader` on `path` in one round trip, after checking in the same command that
        it is a file: `SandboxFileNotFoundError` / `IsADirectoryError` otherwise."""
        quoted = shlex.quote(self.resolve(path))
        result = await self._run_exact(
            f"if [ -d {quoted} ]; then printf 'E:directory'; elif [ ! -e {quoted} ]; then printf 'E:missing'; else {reader}; fi"
        )
        if result.output.startswith("E:missing"):
            raise SandboxFileNotFoundError(f"No such file in the sandbox: {path}")
        if result.output.startswith("E:directory"):
            raise IsADirectoryError(f"Expects a file, got a directory: {path}")
        return result

    async def write_file(self, path: str, content: bytes | str) -> None:
        """Write `content` to `path`, creating parent directories; str is encoded as UTF-8 (surrogates, which
        `os.fsdecode` makes of bytes that are not UTF-8, back to those bytes)."""
        target = self.resolve(path)
        data = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else bytes(content)
        encoded = base64.b64encode(data).decode()
        result = await self._run_exact(
            f"mkdir -p -- {shlex.quote(str(PurePosixPath(target).parent))} && "
            f"printf %s '{encoded}' | base64 -d > {shlex.quote(target)}"
        )
        if result.exit_code != 0:
            raise DeploymentError(f"Cannot write {path}: {result.output.strip()[-500:]}")

    async def upload(self, local_path: str | Path, remote_path: str) -> None:
        """Copy a host file or directory to `remote_path` in the sandbox; a directory goes as one gzipped
        tar archive, sent in chunks through the shell and unpacked there (modes and symlinks kept): a few
        round trips instead of one per file (a repository's thousand files took seconds per reset)."""
        source, target = Path(local_path), PurePosixPath(self.resolve(remote_path))
        if not source.exists():
            raise FileNotFoundError(f"Nothing to upload at {source}")
        if source.is_file():
            await self.write_file(str(target), await asyncio.to_thread(source.read_bytes))
            return
        archive = await asyncio.to_thread(_gzipped_tar, source)
        staged = shlex.quote(f"/tmp/.uni-agent-gym-upload-{secrets.token_hex(6)}.tgz")
        for offset in range(0, max(len(archive), 1), UPLOAD_CHUNK):
            encoded = base64.b64encode(archive[offset : offset + UPLOAD_CHUNK]).decode()
            result = await self._run_exact(f"printf %s '{encoded}' | base64 -d {'>' if offset == 0 else '>>'} {staged}")
            if result.exit_code != 0:
                raise DeploymentError(f"Cannot upload {source}: {result.output.strip()[-500:]}")
        quoted = shlex.quote(str(target))
        result = await self._run_exact(f"mkdir -p -- {quoted} && tar -xzf {staged} -C {quoted} --no-same-owner; status=$?; rm -f -- {staged}; [ $status -eq 0 ]")
        if result.exit_code != 0:
            raise DeploymentError(f"Cannot unpack {source} at {target}: {result.output.strip()[-500:]}")

    async def _upload_as_one_tar(self, local_path: str | Path, remote_path: str) -> None:
        """`upload` where the engine unpacks a tar into the sandbox (`write_archive`, blocking): one archive,
        and nothing inside the sandbox runs to unpack it."""
        self._require_session()
        source, target = Path(local_path), self.resolve(remote_path)
        if not source.exists():
            raise FileNotFoundError(f"Nothing to upload at {source}")
        await self.run(f"mkdir -p -- {shlex.quote(str(PurePosixPath(target).parent))}")

        def put() -> None:
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                tar.add(source, arcname=target.lstrip("/"))
            self._require_container().write_archive("/", buffer.getvalue())

        await asyncio.to_thread(put)

    async def _run_exact(self, command: str) -> CommandResult:
        """Run a harness command with no output cap (file contents must arrive whole)."""
        session = self._require_session()
        return await session.run(command, self.config.command_timeout, uncapped=True)

    # ----- commands (shared) -----

    async def run(self, command: str, timeout: float | None = None, *, output_limit: int | None = None) -> CommandResult:
        """Run `command` in the persistent shell (cwd and exported variables carry over).

        Args:
            command: bash source; it may span lines. Its stdin is /dev/null, stderr is merged in.
            timeout: seconds before the command is interrupted inside the sandbox; the
                config's `command_timeout` when None.
            output_limit: bytes of output kept (head + tail); the config's `output_limit` when None.
        Returns:
            A `CommandResult`; a timeout is a result with `timed_out=True`, not an exception.
        Raises:
            DeploymentNotStartedError: before `start()` or after `stop()`.
            SandboxDiedError: the sandbox itself is gone.
        """
        session = self._require_session()
        return await session.run(command, self.config.command_timeout if timeout is None else timeout, limit=output_limit)

    def _require_container(self) -> ContainerSandbox:
        container = self.container
        if container is None:
            raise DeploymentError(f"{type(self).__name__} is no container: it has no engine to copy an archive in")
        return container

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
        """The directory the shell starts in and relative paths are taken from (None: the image's)."""
        return self.config.workdir

    async def __aenter__(self) -> "Deployment":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
