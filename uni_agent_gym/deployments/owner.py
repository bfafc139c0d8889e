"""Who owns a container: the process that created it (a driver on docker, the sandbox's process on a Ray node).

`cleanup` must tell a live run's containers from those a dead run left, so each container carries its creator
as `host:pid:start`. A pid alone is reused (a busy machine goes through 32,768 of them in half an hour); with
the process's start time (`/proc/PID/stat`) it names one process for good.
"""

from __future__ import annotations

import os
import socket
from typing import Literal

OWNER_LABEL = "uni-agent-gym.owner"
OwnerState = Literal["alive", "gone", "unknown"]


def this_process() -> str:
    """This process as an owner label's value (read at each container's creation: a forked child is another)."""
    return _label(os.getpid())


def _label(pid: int) -> str:
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or ''}"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, or None where it does not exist (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]  # field 22; the name in parentheses may hold spaces
    except (OSError, IndexError):
        return None


def owner_state(label: str | None) -> OwnerState:
    """Whether the owner named by `label` still runs: "unknown" where the label is missing (made before owners
    were recorded) or names another host (its processes are not visible from here)."""
    try:
        host, pid, start = (label or "").rsplit(":", 2)
        pid_number = int(pid)
    except ValueError:
        return "unknown"
    if host != socket.gethostname():
        return "unknown"
    if not start:  # no /proc where it was made: the pid alone
        try:
            os.kill(pid_number, 0)
        except ProcessLookupError:
            return "gone"
        except PermissionError:
            return "alive"
        return "alive"
    return "alive" if _start_time(pid_number) == start else "gone"
