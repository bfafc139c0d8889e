"""Faults and abuse in the sandbox: each test asserts that the caller gets a typed, explained result
and that nothing leaks (no container, no process, no temp dir). The dockerd restart and the soak with
random kills are in `test_soak.py`."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import fixture_sources
from tests.conftest import require_docker
from tests.test_docker_deployment import labelled_containers
from uni_agent_gym.config import GymConfig
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.swebench import SWEBenchReward

READ_PIDS = "read n < /sys/fs/cgroup/pids.current 2>/dev/null || read n < /sys/fs/cgroup/pids/pids.current; echo $n"


def host_processes_with(marker: str) -> list[int]:
    """Host pids whose command line mentions `marker` (not this test process)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def test_a_fork_bomb_is_held_by_the_pids_limit(deployment_factory, container_run_id):
    run_id = container_run_id
    deployment = deployment_factory("docker", run_id=run_id, pids_limit=64)
    await deployment.start()
    bomb = await deployment.run("bomb() { bomb | bomb & }; bomb", timeout=10)
    assert bomb.exit_code is not None  # the shell answered: the bomb went to the background
    await asyncio.sleep(2)
    pids = await deployment.run(READ_PIDS, timeout=10)  # builtins only: no fork needed to look
    # the bomb's "fork: retry" complaints share the shell's output; the count is the line of digits
    assert 0 < int(re.findall(r"^(\d+)$", pids.output, re.MULTILINE)[-1]) <= 64
    await asyncio.wait_for(deployment.stop(), 120)  # the bomb's processes do not hold the stop
    assert labelled_containers(run_id) == []


async def test_a_memory_hog_is_killed_at_the_limit_and_the_sandbox_lives_on(deployment_factory):
    deployment = deployment_factory("docker", memory="256m")
    await deployment.start()
    hog = await deployment.run("python3 -c 'block = bytearray(1024 ** 3); print(len(block))'", timeout=60)
    assert hog.exit_code == 137 and "1073741824" not in hog.output  # SIGKILLed by the OOM killer, not the host
    assert (await deployment.run("echo alive")).output == "alive\n"


@pytest.mark.parametrize("kind", ["local", "docker"])
async def test_a_detached_writer_neither_blocks_nor_outlives_the_sandbox(deployment_factory, kind):
    """`setsid ... &` leaves the shell's session and keeps writing; the command still returns at once,
    and stopping the sandbox ends the writer (docker: with the container; local: found by the marker
    every process of the sandbox inherits)."""
    deployment = deployment_factory(kind)
    await deployment.start()
    marker = f"uag-writer-{secrets.token_hex(4)}"
    result = await deployment.run(
        f"(setsid sh -c 'while :; do echo {marker} >> /tmp/{marker}.log; sleep 0.01; done' </dev/null >/dev/null 2>&1 &); echo detached",
        timeout=30,
    )
    assert (result.output, result.exit_code, result.timed_out) == ("detached\n", 0, False), "the writer held the command"
    await asyncio.sleep(0.5)
    grown = await deployment.run(f"wc -l < /tmp/{marker}.log")
    assert int(grown.output) > 5
    await deployment.stop()
    await asyncio.sleep(0.3)
    if kind == "local":
        assert host_processes_with(marker) == []
        size = Path(f"/tmp/{marker}.log").stat().st_size
        await asyncio.sleep(0.3)
        assert Path(f"/tmp/{marker}.log").stat().st_size == size  # nobody writes any more
        Path(f"/tmp/{marker}.log").unlink()


async def test_a_deleted_repository_grades_as_a_failed_patch_not_a_crash():
    """`rm -rf /testbed` mid-episode: the episode still ends, graded 0.0 with a report that says why."""
    require_docker()
    row = normalise(fixture_sources.derived_rows()["pytest-dev__pytest-7168"])
    await fixture_sources.ensure_image(row)
    env = AsyncSWEEnv(GymConfig.model_validate({"env": {"workspace": "image"}}), reward=SWEBenchReward())
    try:
        await env.reset(options={"instance": row})
        await env.step({"name": "execute_bash", "arguments": {"command": "cd / && rm -rf /testbed && ls /testbed"}})
        _, reward, terminated, _, info = await env.step({"name": "finish", "arguments": {}})
        report = info["reward_report"]
        assert terminated and reward == 0.0 and report["resolved"] is False
        assert report["status"] == "patch_failed" and "no longer a git repository" in report["error"]
    finally:
        await env.close()


async def test_a_host_process_killed_with_sigkill_leaves_only_what_cleanup_removes(docker_image, container_run_id):
    run_id = container_run_id
    script = (
        "import asyncio, os, signal\n"
        "from uni_agent_gym.deployments import make_deployment\n"
        "async def main():\n"
        f"    d = make_deployment({{'type': 'docker', 'image': {docker_image!r}, 'run_id': {run_id!r}}})\n"
        "    await d.start()\n"
        "    print('started', flush=True)\n"
        "    await d.run('sleep 600', timeout=700)\n"
        "asyncio.run(main())\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline() == "started\n"
        await asyncio.sleep(0.5)
        process.send_signal(signal.SIGKILL)
        assert process.wait(30) == -signal.SIGKILL
    finally:
        process.kill()
    assert len(labelled_containers(run_id)) == 1
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "cleanup", "--run-id", run_id], capture_output=True, text=True)
    assert done.returncode == 0 and "removed 1 container" in done.stdout
    assert labelled_containers(run_id) == []
