"""Locks that serialise one build (a mirror, a venv, an image) must work in every event loop of a process."""

from __future__ import annotations

import asyncio

from uni_agent_gym.named_locks import named_lock


def test_a_named_lock_serialises_within_a_loop_and_serves_the_next_loop():
    """A module-level asyncio.Lock, once waited on in one `asyncio.run`, raises "bound to a different event
    loop" when waited on in the next (a new machine's test run hit it building mirrors)."""

    async def contend() -> list[int]:
        order: list[int] = []

        async def hold(tag: int) -> None:
            async with named_lock("mirror /some/repo"):
                order.append(tag)
                await asyncio.sleep(0.01)
                order.append(tag)

        await asyncio.gather(hold(1), hold(2))
        return order

    assert asyncio.run(contend()) == [1, 1, 2, 2]
    assert asyncio.run(contend()) == [1, 1, 2, 2]
