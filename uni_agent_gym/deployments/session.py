"""A persistent bash session over a byte pipe, shared by every deployment.

One long-lived bash reads commands from its stdin. Each command is sent as one line:

    eval '<command>' </dev/null 2>&1; printf '\\n%s:%s\\n' <token> "$?"

so `cd` and `export` persist, the command gets EOF on stdin, a syntax error is an ordinary failed
command, and the end of its output is a sentinel line carrying the exit code under a random
per-command token (output that imitates a sentinel cannot match a token it never saw). (A `{ ...; }`
group would be shorter, but bash 5.2 stops recognising `{` on the line after an eval syntax error.)

On a timeout every process of the shell's session except the shell itself is killed inside the
sandbox (by a second, short command beside the shell), background jobs of earlier commands
included; if the sentinel still does not come (the
shell itself is busy, e.g. `while :; do :; done`), the shell is replaced by a new one and the
result carries a note. Output is kept as head + tail with the elision counted, so a command that
prints 1 GB costs the host at most `output_limit` bytes.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import secrets
import shlex
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from uni_agent_gym.errors import DeploymentError, SandboxDiedError

# Kills every process of the shell's session but the shell (or, where the shell is not a session
# leader, its descendants), in rounds until none is left, so processes forked meanwhile die too.
# With a second argument `with-shell` the shell is killed last. Zombies are skipped: they are dead already and vanish when their parent reaps them.
KILL_TREE_SCRIPT = r"""
root=$(($1)); with_shell=$2
read_stat() { { read -r line < "/proc/$1/stat"; } 2>/dev/null || return 1; set -- ${line##*) }; state=$1; ppid=$2; sid=$4; [ "$state" != Z ]; }
read_stat "$root" || exit 0
root_sid=$sid
round=0
while [ $round -lt 50 ]; do
  round=$((round + 1))
  targets=""
  if [ "$root_sid" = "$root" ]; then
    for dir in /proc/[0-9]*; do
      pid=${dir#/proc/}
      [ "$pid" = "$root" ] || [ "$pid" = "$$" ] && continue
      read_stat "$pid" && [ "$sid" = "$root" ] && targets="$targets $pid"
    done
  else
    frontier=" $root "
    while [ -n "${frontier# }" ]; do
      next=" "
      for dir in /proc/[0-9]*; do
        pid=${dir#/proc/}
        read_stat "$pid" || continue
        case "$frontier" in *" $ppid "*) next="$next$pid " ;; esac
      done
      targets="$targets$next"; frontier=$next
    done
  fi
  [ -z "${targets## }" ] && break
  kill -KILL $targets 2>/dev/null
done
[ "$with_shell" = with-shell ] && kill -KILL "$root" 2>/dev/null
exit 0
"""

logger = logging.getLogger(__name__)

INTERRUPT_GRACE = 3.0  # seconds to wait for the sentinel after the command's processes were killed
READ_SIZE = 1 << 18


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


class ShellProcess(abc.ABC):
    """A running bash inside a sandbox: its stdin, and its stdout with stderr merged in."""

    @abc.abstractmethod
    async def write(self, data: bytes) -> None:
        """Send bytes to the shell's stdin."""

    @abc.abstractmethod
    async def read(self) -> bytes:
        """The next chunk of output, b"" at end of stream. Must be safe to cancel (no data lost)."""

    @abc.abstractmethod
    async def exit_code(self) -> int | None:
        """The shell's exit status once its output has ended; None if the sandbox cannot tell."""

    @abc.abstractmethod
    async def kill(self) -> None:
        """End the shell process and release the pipe; safe to call twice."""


class StreamShell(ShellProcess):
    """A shell behind a socket's asyncio streams (docker's exec, a Ray node's relay): writing and closing are the stream's."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def kill(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass


SpawnShell = Callable[[], Awaitable[ShellProcess]]
RunBeside = Callable[[list[str]], Awaitable[None]]


class _Collector:
    """Accumulates one command's output until its sentinel: head + tail kept, the middle counted."""

    def __init__(self, token: bytes, limit: int | None) -> None:
        limit = sys.maxsize if limit is None else limit
        self.marker = b"\n" + token + b":"
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.pending = b""
        self.exit_code: int | None = None
        self.done = False

    def feed(self, chunk: bytes) -> None:
        data = self.pending + chunk
        at = data.find(self.marker)
        if at >= 0:
            end = data.find(b"\n", at + len(self.marker))
            if end < 0:  # the exit code has not fully arrived yet
                self._keep(data[:at])
                self.pending = data[at:]
                return
            self._keep(data[:at])
            status = data[at + len(self.marker) : end]
            self.exit_code = int(status) if status.isdigit() else None
            self.pending = b""
            self.done = True
            return
        cut = max(0, len(data) - (len(self.marker) - 1))  # a marker may straddle two chunks
        self._keep(data[:cut])
        self.pending = data[cut:]

    def _keep(self, data: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def output(self) -> tuple[str, bool]:
        """The decoded output (invalid UTF-8 replaced) and whether anything was elided."""
        body = bytes(self.head)
        if self.dropped:
            body += f"\n[... {self.dropped} bytes of output elided ...]\n".encode()
        body += bytes(self.tail) + (self.pending if not self.done else b"")
        return body.decode("utf-8", errors="replace"), self.dropped > 0


class ShellSession:
    """Runs commands one at a time in a persistent bash; see the module docstring for the protocol."""

    def __init__(
        self,
        spawn: SpawnShell,
        run_beside: RunBeside,
        *,
        output_limit: int,
        startup_timeout: float,
        workdir: str | None = None,
    ) -> None:
        self._spawn = spawn
        self._run_beside = run_beside
        self._output_limit = output_limit
        self._startup_timeout = startup_timeout
        self._workdir = workdir
        self._process: ShellProcess | None = None
        self._shell_pid: str | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    async def start(self) -> None:
        """Open the shell and wait for it to answer (a sentinel, not a sleep)."""
        self._process = await self._spawn()
        token = secrets.token_hex(16)
        init = f"exec 2>&1; export PAGER=cat GIT_PAGER=cat; printf '\\n%s:%s\\n' {token} $$\n"
        await self._process.write(init.encode())
        collector = _Collector(token.encode(), self._output_limit)
        deadline = time.monotonic() + self._startup_timeout
        try:
            await self._read_until_sentinel(collector, deadline)
        except (TimeoutError, EOFError) as exc:
            await self._shutdown()
            reason = "did not answer in time" if isinstance(exc, TimeoutError) else "exited at once"
            raise DeploymentError(f"The sandbox's bash {reason}: {collector.output()[0][-500:]!r}") from None
        self._shell_pid = str(collector.exit_code)
        if self._workdir:
            result = await self.run(f"cd -- {shlex.quote(self._workdir)}", self._startup_timeout, locked=False)
            if result.exit_code != 0:
                await self._shutdown()
                raise DeploymentError(f"Cannot enter the working directory {self._workdir}: {result.output.strip()}")

    async def close(self) -> None:
        """Kill every process of the session, then the shell; no new shell is started after this."""
        self._closed = True
        await self._shutdown()

    async def _shutdown(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            await self._kill_tree(with_shell=True)
        except Exception as exc:  # noqa: BLE001 - cleanup boundary: the sandbox may be gone already
            logger.debug("killing the session's processes failed: %s", exc)
        finally:
            await process.kill()

    async def _kill_tree(self, *, with_shell: bool = False) -> None:
        if self._shell_pid:
            argv = ["sh", "-c", KILL_TREE_SCRIPT, "sh", self._shell_pid] + (["with-shell"] if with_shell else [])
            await asyncio.wait_for(self._run_beside(argv), 30)

    async def run(
        self, command: str, timeout: float, *, uncapped: bool = False, limit: int | None = None, locked: bool = True
    ) -> CommandResult:
        """Run one command; see `Deployment.run` for the contract. `uncapped` keeps all the output, `limit`
        keeps that many bytes (head + tail) instead of the session's `output_limit`."""
        limit = None if uncapped else limit or self._output_limit
        if not locked:
            return await self._run(command, timeout, limit)
        async with self._lock:
            return await self._run(command, timeout, limit)

    async def _run(self, command: str, timeout: float, limit: int | None) -> CommandResult:
        if self._process is None:
            raise SandboxDiedError("The shell session is closed")
        started = time.monotonic()
        token = secrets.token_hex(16)
        line = f"eval {shlex.quote(command)} </dev/null 2>&1; printf '\\n%s:%s\\n' {token} \"$?\"\n"
        collector = _Collector(token.encode(), limit)
        try:
            await self._process.write(line.encode("utf-8", "surrogateescape"))  # a path that is not UTF-8 keeps its bytes
        except (ConnectionError, BrokenPipeError, OSError):
            return await self._after_shell_exit(collector, started)
        try:
            await self._read_until_sentinel(collector, started + timeout)
        except TimeoutError:
            return await self._after_timeout(collector, started, timeout)
        except EOFError:
            return await self._after_shell_exit(collector, started)
        if self._closed:  # stop() killed the command: its end is not the command's own
            raise SandboxDiedError("The deployment was stopped while the command ran")
        output, truncated = collector.output()
        return CommandResult(output, collector.exit_code, False, truncated, time.monotonic() - started)

    async def _read_until_sentinel(self, collector: _Collector, deadline: float) -> None:
        while not collector.done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            if self._process is None:  # closed meanwhile by stop()
                raise EOFError
            try:
                chunk = await asyncio.wait_for(self._process.read(), remaining)
            except TimeoutError:  # a subclass of OSError: let it through
                raise
            except OSError:  # the pipe broke: the shell is gone
                chunk = b""
            if not chunk:
                raise EOFError
            collector.feed(chunk)

    async def _after_timeout(self, collector: _Collector, started: float, timeout: float) -> CommandResult:
        """Kill the command's processes inside the sandbox; replace the shell if it stays busy."""
        note = ""
        try:
            await self._kill_tree()
            await self._read_until_sentinel(collector, time.monotonic() + INTERRUPT_GRACE)
        except Exception:  # noqa: BLE001 - whatever went wrong, a new shell is the way out
            await self._restart()
            note = (
                f"The command timed out after {timeout:g} s and the shell did not recover, so a new shell "
                "session was started: the working directory and environment variables are reset."
            )
        output, truncated = collector.output()
        return CommandResult(output, None, True, truncated, time.monotonic() - started, note)

    async def _after_shell_exit(self, collector: _Collector, started: float) -> CommandResult:
        """The shell ended (`exit`, `set -e`, killed): report its status and start a new one."""
        status = await self._process.exit_code() if self._process is not None else None
        await self._restart()
        output, truncated = collector.output()
        note = (
            f"The shell exited (status {status}), so a new shell session was started: "
            "the working directory and environment variables are reset."
        )
        return CommandResult(output, status, False, truncated, time.monotonic() - started, note)

    async def _restart(self) -> None:
        """Replace the shell; `SandboxDiedError` when the sandbox itself cannot give a new one."""
        await self._shutdown()
        if self._closed:
            raise SandboxDiedError("The shell session was closed while the command ran")
        try:
            await self.start()
        except Exception as exc:  # noqa: BLE001 - boundary: any failure here means the sandbox is gone
            raise SandboxDiedError(f"The sandbox is gone: a new shell could not be started ({exc})") from None
