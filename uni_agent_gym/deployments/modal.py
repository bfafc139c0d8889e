"""A `modal.Sandbox` per deployment (modal 1.x), for scaling past one machine.

The sandbox runs `sleep infinity`; commands go through the same persistent-shell protocol as local
and docker, over one long-lived `bash` exec. Interrupting a command needs a second exec, because
Modal's `ContainerProcess` has no kill. Only the `.aio` forms of the SDK are used, so nothing blocks
the event loop. Credentials are checked before anything is sent: without them the SDK would retry
for about a minute before failing.
"""

from __future__ import annotations

import asyncio
import logging

import modal
import modal.exception
from modal.stream_type import StreamType

from uni_agent_gym.config import ModalDeploymentConfig
from uni_agent_gym.deployments.base import Deployment
from uni_agent_gym.deployments.session import ShellProcess
from uni_agent_gym.errors import DeploymentError, SandboxDiedError

logger = logging.getLogger(__name__)

CREATE_ATTEMPTS = 4  # sandbox creation is rate-limited (about 5 a second per workspace)
CREATE_BACKOFF = 0.5  # seconds before the first retry; doubles each time


class _ModalShell(ShellProcess):
    """bash as a Modal exec; a pump task moves stdout into a queue so reads are safe to cancel."""

    def __init__(self, process) -> None:
        self._process = process
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue(maxsize=16)  # bounded: backpressure, not memory
        self._ended = False
        self._pump = asyncio.create_task(self._pump_stdout())

    async def _pump_stdout(self) -> None:
        try:
            async for chunk in self._process.stdout:
                if chunk:
                    await self._chunks.put(chunk if isinstance(chunk, bytes) else chunk.encode())
        except modal.exception.Error as exc:
            logger.debug("Modal stdout stream ended with %s", exc)
        finally:
            try:
                self._chunks.put_nowait(b"")  # end of stream; when full, read() sees the pump is done
            except asyncio.QueueFull:
                pass

    async def write(self, data: bytes) -> None:
        try:
            self._process.stdin.write(data)
            await self._process.stdin.drain.aio()
        except modal.exception.Error as exc:
            raise BrokenPipeError(f"Modal stdin is closed: {exc}") from None

    async def read(self) -> bytes:
        if self._ended or (self._chunks.empty() and self._pump.done()):
            return b""
        chunk = await self._chunks.get()
        self._ended = not chunk
        return chunk

    async def exit_code(self) -> int | None:
        try:
            return await self._process.wait.aio()
        except modal.exception.Error:
            return None

    async def kill(self) -> None:
        try:
            self._process.stdin.write_eof()
            await self._process.stdin.drain.aio()
        except modal.exception.Error:
            pass
        self._pump.cancel()


class ModalDeployment(Deployment):
    """A sandbox in Modal's cloud from a registry image; `stop()` terminates it."""

    def __init__(self, config: ModalDeploymentConfig) -> None:
        super().__init__(config)
        self.sandbox = None

    async def _provision(self) -> None:
        if not (modal.config.config.get("token_id") and modal.config.config.get("token_secret")):
            raise DeploymentError(
                "No Modal credentials: run `modal token new`, or set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET."
            )
        self.sandbox = await self._create_sandbox()

    async def _create_sandbox(self):
        config = self.config
        try:
            app = await modal.App.lookup.aio(config.app_name, create_if_missing=True)
        except modal.exception.AuthError as exc:
            raise DeploymentError(f"Modal refused the credentials: {exc}") from None
        image = modal.Image.from_registry(config.image)
        for attempt in range(1, CREATE_ATTEMPTS + 1):
            try:
                return await modal.Sandbox.create.aio(
                    "sleep",
                    "infinity",
                    app=app,
                    image=image,
                    timeout=config.sandbox_timeout,
                    workdir=config.workdir,
                    cpu=config.cpu,
                    memory=config.memory_mb,
                    block_network=config.block_network,
                    env=dict(config.env) or None,
                )
            except modal.exception.ResourceExhaustedError:
                if attempt == CREATE_ATTEMPTS:
                    raise DeploymentError(f"Modal kept refusing new sandboxes ({attempt} attempts)") from None
                await asyncio.sleep(CREATE_BACKOFF * 2 ** (attempt - 1))  # a cancel interrupts this sleep: no swallowed cancel
            except modal.exception.Error as exc:
                raise DeploymentError(f"Cannot create a Modal sandbox from {config.image!r}: {exc}") from None
        raise AssertionError("unreachable")

    async def _spawn_shell(self) -> ShellProcess:
        try:
            process = await self.sandbox.exec.aio("bash", "--noprofile", "--norc", text=False, stderr=StreamType.DEVNULL)
        except modal.exception.Error as exc:
            raise SandboxDiedError(f"Cannot open a shell in the Modal sandbox: {exc}") from None
        return _ModalShell(process)

    async def _run_beside(self, argv: list[str]) -> None:
        try:
            process = await self.sandbox.exec.aio(*argv, text=False, stdout=StreamType.DEVNULL, stderr=StreamType.DEVNULL)
            await process.wait.aio()
        except modal.exception.Error as exc:
            raise SandboxDiedError(f"The Modal sandbox does not run commands: {exc}") from None

    async def _release(self) -> None:
        sandbox, self.sandbox = self.sandbox, None
        if sandbox is None:
            return
        try:
            await sandbox.terminate.aio()
        except modal.exception.Error as exc:
            logger.warning("terminating the Modal sandbox failed: %s", exc)

    async def engine_answers(self) -> bool:
        """Modal's API answers about the sandbox (its exit code, once it ended) instead of failing."""
        if self.sandbox is None:
            return False
        try:
            await asyncio.wait_for(self.sandbox.poll.aio(), 30)
        except (modal.exception.Error, asyncio.TimeoutError, OSError):
            return False
        return True

    async def is_alive(self) -> bool:
        if self.sandbox is None:
            return False
        try:
            running = await self.sandbox.poll.aio() is None
        except modal.exception.Error:
            return False
        return running and await super().is_alive()
