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


HOLD = """
import asyncio, sys, time
from uni_agent_gym.named_locks import blocking_machine_lock, machine_lock

name, log, kind = sys.argv[1], sys.argv[2], sys.argv[3]

def note(text):
    with open(log, "a") as out:
        out.write(text + "\\n")

async def hold_async():
    async with machine_lock(name):
        note("in"); await asyncio.sleep(0.3); note("out")

if kind == "async":
    asyncio.run(hold_async())
else:
    with blocking_machine_lock(name):
        note("in"); time.sleep(0.3); note("out")
"""


def test_a_machine_lock_serialises_processes(tmp_path):
    """Two processes building the same thing (verl's workers, parallel test workers) take turns: the
    async and the blocking form exclude each other, and a lock of another name does not wait."""
    import subprocess
    import sys

    name = f"test {tmp_path}"
    log = tmp_path / "log"

    def start(kind: str, lock: str = name) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", HOLD, lock, str(log), kind])

    processes = [start("async"), start("blocking"), start("async")]
    assert [p.wait(timeout=60) for p in processes] == [0, 0, 0]
    assert log.read_text().split() == ["in", "out"] * 3, "no process was inside while another was"

    log.unlink()
    processes = [start("async", f"{name} a"), start("async", f"{name} b")]
    assert [p.wait(timeout=60) for p in processes] == [0, 0]
    assert log.read_text().split()[:2] == ["in", "in"], "different names do not wait for each other"


def test_a_cancelled_waiter_leaves_the_machine_lock_free(tmp_path):
    """A task cancelled while it waits for a machine lock (an interrupted run) holds nothing afterwards."""
    from uni_agent_gym.named_locks import blocking_machine_lock, machine_lock

    name = f"test {tmp_path}"

    async def wait_then_cancel() -> None:
        waiter = asyncio.ensure_future(machine_lock(name).__aenter__())
        await asyncio.sleep(0.2)
        assert not waiter.done(), "another holder has it"
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)

    import threading

    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with blocking_machine_lock(name):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    asyncio.run(wait_then_cancel())
    release.set()
    thread.join()

    async def take() -> bool:
        async with asyncio.timeout(5), machine_lock(name):
            return True

    assert asyncio.run(take())
