"""A stand-in for the `modal` SDK at the `modal.Sandbox` boundary.

Modal's cloud cannot run here (no credentials, no network) and the SDK has no local mode, so these
fakes replace `modal.App.lookup`, `modal.Image.from_registry` and `modal.Sandbox.create`. They record
what the deployment sends and reproduce the SDK's behaviours that matter to it (DESIGN.md): only the
`.aio` forms are awaitable, `create` needs `app=`, a `ContainerProcess` has no kill, an exec timeout
makes `wait()` return -1, a terminated sandbox refuses execs. Every call is first bound to the real
SDK's signature (`_sdk`), so one that Modal would reject with TypeError is rejected here too. Execs run
as host processes, so the shared contract suite exercises the real session protocol through this
boundary. As no two Modal sandboxes share a filesystem, a sandbox created with a `workdir` sees a
directory of its own there (as root: each exec in a mount namespace with the sandbox's own directory
bound over that path), so an agent's sandbox and the fresh one that grades it, both at the same
repository path, are apart.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import tempfile
from dataclasses import dataclass, field

import modal
import modal.exception
from modal.container_process import ContainerProcess
from modal.io_streams import StreamReader, StreamWriter

# the real entry points, taken at import: `install` replaces these three on the SDK for a test's length
_REAL_LOOKUP, _REAL_FROM_REGISTRY, _REAL_CREATE = modal.App.lookup, modal.Image.from_registry, modal.Sandbox.create


def _sdk(real):
    """Bind each call of the decorated fake to `real`'s signature first (a method's fake gets its own
    instance as `self`): the fakes accept what the tests send, this rejects what Modal would."""
    signature = inspect.signature(real)

    def decorate(fake):
        @functools.wraps(fake)
        def call(*args, **kwargs):
            signature.bind(*args, **kwargs)
            return fake(*args, **kwargs)

        return call

    return decorate


class _Aio:
    """A method with modal's calling convention: `obj.method.aio(...)` from asyncio."""

    def __init__(self, coroutine_function) -> None:
        self.aio = coroutine_function

    def __call__(self, *args, **kwargs):
        raise AssertionError("blocking form of a modal method called from asyncio; use .aio")


class FakeStdin:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process, self._buffer, self._eof = process, bytearray(), False
        self.drain = _Aio(self._drain)

    @_sdk(StreamWriter.write)
    def write(self, data: bytes) -> None:
        if self._eof:
            raise modal.exception.InvalidError("stdin is closed")
        self._buffer += data

    @_sdk(StreamWriter.write_eof)
    def write_eof(self) -> None:
        self._eof = True

    @_sdk(StreamWriter.drain)
    async def _drain(self) -> None:
        stdin = self._process.stdin
        data, self._buffer = bytes(self._buffer), bytearray()
        try:
            if data:
                stdin.write(data)
                await stdin.drain()
            if self._eof:
                stdin.close()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise modal.exception.ExecutionError(f"stdin: {exc}") from None


class FakeStdout:
    def __init__(self, stream: asyncio.StreamReader | None) -> None:
        self._stream = stream

    @_sdk(StreamReader.__aiter__)
    def __aiter__(self):
        return self._chunks()

    async def _chunks(self):
        if self._stream is None:
            return
        while chunk := await self._stream.read(1 << 16):
            yield chunk


class FakeContainerProcess:
    """Like modal's ContainerProcess: stdin, stdout, wait; deliberately no kill()."""

    def __init__(self, process: asyncio.subprocess.Process, timeout: int | None) -> None:
        self._process, self._timeout = process, timeout
        self.stdin = FakeStdin(process)
        self.stdout = FakeStdout(process.stdout)
        self.wait = _Aio(self._wait)

    @_sdk(ContainerProcess.wait)
    async def _wait(self) -> int:
        try:
            return await asyncio.wait_for(self._process.wait(), self._timeout)
        except TimeoutError:
            self._process.kill()
            await self._process.wait()
            return -1  # Modal: an exec timeout does not raise, wait() returns -1


@dataclass
class StandIn:
    """What the deployment sent, for assertions."""

    lookups: list[dict] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    creates: list[dict] = field(default_factory=list)
    execs: list[tuple] = field(default_factory=list)
    sandboxes: list["FakeSandbox"] = field(default_factory=list)
    refuse_creates: int = 0  # how many creates fail with ResourceExhaustedError first


class FakeSandbox:
    def __init__(self, standin: StandIn, workdir: str | None, env: dict | None) -> None:
        self._standin = standin
        # a sandbox's env reaches its execs; the host's does not (an image's own: here PATH and HOME only)
        self._env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **(env or {})}
        self._tempdir = tempfile.TemporaryDirectory(prefix="modal-standin-")
        self._workdir = workdir or self._tempdir.name
        os.makedirs(self._workdir, exist_ok=True)  # as a container runtime makes its working directory
        # its own copy of the workdir (see the module docstring); without root, the host's directory itself
        self._private = os.path.join(self._tempdir.name, "workdir") if workdir and os.geteuid() == 0 else None
        if self._private:
            os.makedirs(self._private)
        self._processes: list[asyncio.subprocess.Process] = []
        self.terminated = False
        self.exec = _Aio(self._exec)
        self.terminate = _Aio(self._terminate)
        self.poll = _Aio(self._poll)

    @_sdk(modal.Sandbox.exec)
    async def _exec(self, *args: str, text: bool = True, stdout=None, stderr=None, timeout=None, workdir=None, **kw):
        from modal.stream_type import StreamType

        if self.terminated:
            raise modal.exception.SandboxTerminatedError("Sandbox has been terminated")
        self._standin.execs.append((args, dict(text=text, stdout=stdout, stderr=stderr, timeout=timeout, **kw)))
        cwd = workdir or self._workdir
        if self._private:
            bind = 'mount --bind "$1" "$2" && cd "$3" && shift 3 && exec "$@"'
            args, cwd = ("unshare", "--mount", "--propagation", "private", "sh", "-c", bind, "sh", self._private, self._workdir, cwd, *args), "/"
        process = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL if stdout == StreamType.DEVNULL else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL if stderr == StreamType.DEVNULL else asyncio.subprocess.PIPE,
            cwd=cwd,
            env=self._env,
        )
        self._processes.append(process)
        return FakeContainerProcess(process, timeout)

    @_sdk(modal.Sandbox.terminate)
    async def _terminate(self, *, wait: bool = False) -> None:
        self.terminated = True
        for process in self._processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
        self._tempdir.cleanup()

    @_sdk(modal.Sandbox.poll)
    async def _poll(self) -> int | None:
        return 0 if self.terminated else None


def install(monkeypatch) -> StandIn:
    """Replace the SDK entry points the deployment uses; return the record of what it sent."""
    standin = StandIn()
    monkeypatch.setenv("MODAL_TOKEN_ID", "ak-standin")
    monkeypatch.setenv("MODAL_TOKEN_SECRET", "as-standin")

    @_sdk(_REAL_LOOKUP)
    async def lookup(name: str, *, create_if_missing: bool = False, **kw):
        standin.lookups.append(dict(name=name, create_if_missing=create_if_missing, **kw))
        return f"app:{name}"

    @_sdk(_REAL_FROM_REGISTRY)
    def from_registry(tag: str, **kw):
        standin.images.append(tag)
        return f"image:{tag}"

    @_sdk(_REAL_CREATE)
    async def create(*args: str, app=None, **kwargs):
        if app is None:
            raise modal.exception.InvalidError("Sandbox.create needs app= outside a running app")
        if standin.refuse_creates > 0:
            standin.refuse_creates -= 1
            raise modal.exception.ResourceExhaustedError("rate limited")
        standin.creates.append(dict(args=args, app=app, **kwargs))
        sandbox = FakeSandbox(standin, kwargs.get("workdir"), kwargs.get("env"))
        standin.sandboxes.append(sandbox)
        return sandbox

    monkeypatch.setattr(modal.App, "lookup", _Aio(lookup))
    monkeypatch.setattr(modal.Image, "from_registry", from_registry)
    monkeypatch.setattr(modal.Sandbox, "create", _Aio(create))
    return standin
