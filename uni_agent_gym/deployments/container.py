"""What a sandbox that is a container offers beyond its shell, declared once.

The reward reads the agent's changes as the engine sees them (`docker diff`, archives read by the daemon:
nothing the agent left inside runs), the warm pool scrubs a container against its baseline, and an upload
goes in as one tar. The docker deployment implements this on this machine's engine; the ray deployment on
its node's engine, through the node's host. `Deployment.container` is the sandbox as a `ContainerSandbox`,
or None where the sandbox is no container the gym's engine drives (local, modal): callers ask that, never
`hasattr`. `OPERATIONS` is the protocol's calls as data: a Ray node's host answers exactly those, and the ray
deployment's forwards to it are made from them, so an operation is declared here and nowhere else.
"""

from __future__ import annotations

import inspect
from typing import Protocol

from uni_agent_gym.errors import UniAgentGymError


class ArchiveTooLarge(UniAgentGymError, ValueError):
    """A copy out of a container would exceed the size it was allowed (what the agent made, not a fault)."""


class ContainerSandbox(Protocol):
    """A running container and the engine's calls on it. The blocking calls are made from a thread."""

    container_id: str | None

    @property
    def on_this_engine(self) -> bool:
        """Whether the container runs on this machine's engine (a tool here may address it by `container_id`)."""

    def changes(self) -> list[tuple[str, str]]:
        """(kind, path) of what the container changed against its image; kind is A, C or D. Blocking."""

    def read_archive(self, path: str, max_bytes: int) -> bytes | None:
        """A tar of `path` read by the engine; None when it does not exist; `ArchiveTooLarge` past `max_bytes`. Blocking."""

    def read_heads(self, paths: list[str], size: int) -> dict[str, tuple[int, bytes]]:
        """{path: (mode, the first `size` bytes of a regular file, else b"")} of those of `paths` that exist, read by
        the engine (what a file is, without copying it whole). Blocking."""

    def write_archive(self, directory: str, data: bytes) -> None:
        """Unpack a tar into `directory` (the engine does it; nothing inside runs). Blocking."""

    def pause(self) -> None:
        """Freeze every process in the container. Blocking."""

    def unpause(self) -> None:
        """Undo `pause`. Blocking."""

    async def isolate_network(self) -> bool:
        """Cut the container off every network (loopback stays)."""

    async def restore_network(self) -> None:
        """Undo `isolate_network`."""


# The calls of `ContainerSandbox` (its methods; not its attributes), each mapped to whether it blocks (else it is a
# coroutine function), in the order declared.
OPERATIONS: dict[str, bool] = {
    name: not inspect.iscoroutinefunction(member)
    for name, member in vars(ContainerSandbox).items()
    if inspect.isfunction(member) and not name.startswith("_")
}
