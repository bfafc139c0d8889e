"""Named locks: per event loop (`named_lock`), and machine-wide (`machine_lock`, `blocking_machine_lock`,
`free_slot`).

A module-level `asyncio.Lock` binds to the first event loop that waits on it and then fails in any other
("bound to a different event loop"): every `asyncio.run`, and every pytest-asyncio test, has its own loop.
So work that must not run twice at once within a loop takes its lock from here, keyed by the running loop
(weakly: a closed loop's locks go with it).

What a build makes is shared by every process on the machine (images in the one Docker engine, mirrors,
wheelhouses and venvs under the cache): verl's agent-loop workers, parallel test workers and two CLI runs
build the same things at once. `machine_lock` adds an exclusive `flock` on a file named after the lock, so
one process builds and the others then find it built. The kernel drops a dead process's locks.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import itertools
import os
import tempfile
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = weakref.WeakKeyDictionary()
LOCK_DIR = Path(tempfile.gettempdir()) / f"uni-agent-gym-locks-{os.getuid()}"
POLL_SECONDS = 0.05  # while another process holds a machine lock; free locks are taken at once


def named_lock(name: str) -> asyncio.Lock:
    """The lock called `name` of the running event loop."""
    return _locks.setdefault(asyncio.get_running_loop(), {}).setdefault(name, asyncio.Lock())


def _open_lock_file(name: str) -> int:
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    path = LOCK_DIR / (hashlib.sha256(name.encode()).hexdigest()[:32] + ".lock")
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


@asynccontextmanager
async def machine_lock(name: str) -> AsyncIterator[None]:
    """Hold `name` against this loop's other tasks and every other process (and thread) on the machine.
    Waits by polling, so a cancelled waiter leaves nothing behind."""
    async with named_lock(name):
        descriptor = _open_lock_file(name)
        try:
            while True:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    await asyncio.sleep(POLL_SECONDS)
            yield
        finally:
            os.close(descriptor)  # releases the flock


@asynccontextmanager
async def free_slot(name: str) -> AsyncIterator[int]:
    """The lowest slot number of `name` that nobody on the machine holds, held until exit (never waits):
    a caller that comes back once the others have gone gets the same number again."""
    for slot in itertools.count():
        descriptor = _open_lock_file(f"{name} slot {slot}")
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        try:
            yield slot
        finally:
            os.close(descriptor)
        return


@contextmanager
def blocking_machine_lock(name: str) -> Iterator[None]:
    """`machine_lock` for synchronous code (it blocks the thread while another process holds `name`)."""
    descriptor = _open_lock_file(name)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
