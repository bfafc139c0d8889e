"""Named asyncio locks, one set per event loop.

A module-level `asyncio.Lock` binds to the first event loop that waits on it and then fails in any other
("bound to a different event loop"): every `asyncio.run`, and every pytest-asyncio test, has its own loop.
So work that must not run twice at once within a loop (building one mirror, venv or image) takes its lock
from here, keyed by the running loop (weakly: a closed loop's locks go with it).
"""

from __future__ import annotations

import asyncio
import weakref

_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = weakref.WeakKeyDictionary()


def named_lock(name: str) -> asyncio.Lock:
    """The lock called `name` of the running event loop."""
    return _locks.setdefault(asyncio.get_running_loop(), {}).setdefault(name, asyncio.Lock())
