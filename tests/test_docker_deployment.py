"""What only the docker deployment does: labels, limits, isolation, dying containers, cleanup."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import require
from uni_agent_gym.deployments.docker import LABEL, RUN_ID_LABEL, docker_client
from uni_agent_gym.errors import ImageNotFoundError, SandboxDiedError


def labelled_containers(run_id: str) -> list[str]:
    filters = {"label": [f"{LABEL}=1", f"{RUN_ID_LABEL}={run_id}"]}
    return [c.id for c in docker_client().containers.list(all=True, filters=filters)]


async def test_container_is_labelled_and_removed_on_stop(deployment_factory, container_run_id):
    run_id = container_run_id
    deployment = deployment_factory("docker", run_id=run_id)
    await deployment.start()
    assert labelled_containers(run_id) == [deployment.container_id]
    await deployment.stop()
    assert labelled_containers(run_id) == []


async def test_limits_and_privileges_apply_inside(deployment_factory):
    deployment = deployment_factory("docker", pids_limit=77, memory="300m", cpus=0.5)
    await deployment.start()
    pids = await deployment.run("cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max")
    assert pids.output.strip() == "77"
    memory = await deployment.run(
        "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes"
    )
    assert int(memory.output) == 300 * 1024 * 1024
    status = await deployment.run("grep -E '^(NoNewPrivs|CapEff)' /proc/self/status")
    assert "NoNewPrivs:\t1" in status.output
    assert "CapEff:\t000001ffffffffff" not in status.output, "the container must not be privileged"
    raw_socket = await deployment.run("python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)'")
    assert raw_socket.exit_code != 0 and "Operation not permitted" in raw_socket.output, "NET_RAW is dropped"
    mknod = await deployment.run("mknod /tmp/uag-device c 1 3")
    assert mknod.exit_code != 0, "MKNOD is dropped"
    owned = await deployment.run("touch /tmp/f && chown 1234:1234 /tmp/f && chmod 600 /tmp/f && stat -c %u /tmp/f")
    assert owned.output == "1234\n", "root in the sandbox still owns and edits files"
    assert (await deployment.run("test -S /var/run/docker.sock")).exit_code == 1, "no Docker socket inside"


async def test_network_none_leaves_only_loopback(deployment_factory):
    deployment = deployment_factory("docker", network="none")
    await deployment.start()
    interfaces = await deployment.run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
    assert interfaces.output.split() == ["lo"]


async def test_env_and_workdir(deployment_factory):
    deployment = deployment_factory("docker", workdir="/srv/work", env={"UAG_MODE": "test me"})
    await deployment.start()
    assert (await deployment.run('pwd; echo "$UAG_MODE"')).output == "/srv/work\ntest me\n"
    await deployment.write_file("relative.txt", "x")  # relative paths are taken from the workdir
    assert await deployment.read_file("/srv/work/relative.txt") == b"x"


async def test_container_killed_from_outside(deployment_factory, container_run_id):
    run_id = container_run_id
    deployment = deployment_factory("docker", run_id=run_id)
    await deployment.start()
    docker_client().api.kill(deployment.container_id)
    with pytest.raises(SandboxDiedError, match="gone"):
        await deployment.run("echo hello")
    assert not await deployment.is_alive()
    await deployment.stop()
    assert labelled_containers(run_id) == []


async def test_container_removed_from_outside_mid_command(deployment_factory, container_run_id):
    run_id = container_run_id
    deployment = deployment_factory("docker", run_id=run_id)
    await deployment.start()
    import asyncio

    command = asyncio.create_task(deployment.run("sleep 30", timeout=60))
    await asyncio.sleep(0.5)
    await asyncio.to_thread(docker_client().api.remove_container, deployment.container_id, force=True)
    with pytest.raises(SandboxDiedError):
        await command
    with pytest.raises(SandboxDiedError):  # a copy into it too: not the agent's doing
        await deployment.upload(__file__, "/tmp/copy.py")
    # the soak once lost the container between upload's mkdir and its archive call: a raw 404 escaped
    with pytest.raises(SandboxDiedError, match="is gone"):
        deployment._api("copy files", docker_client().api.put_archive, deployment.container_id, "/", b"")
    await deployment.stop()  # nothing left to remove: must not raise
    assert labelled_containers(run_id) == []


async def test_missing_image_says_which_and_how_to_get_it(deployment_factory):
    deployment = deployment_factory("docker", image="uni-agent-gym/does-not-exist:0", pull="never")
    with pytest.raises(ImageNotFoundError) as caught:
        await deployment.start()
    message = str(caught.value)
    assert "'uni-agent-gym/does-not-exist:0'" in message
    assert "docker pull" in message and "`uni-agent-gym images build --dataset ROWS --instance-ids ID`" in message
    assert "bootstrap-base" not in message, "an instance's image (a C row's too) is not a base image"
    base = deployment_factory("docker", image="uni-agent-gym/base:py3.12", pull="never")
    with pytest.raises(ImageNotFoundError, match=r"`uni-agent-gym images bootstrap-base --python 3\.12`"):
        await base.start()
    pulling = deployment_factory("docker", image="uni-agent-gym/does-not-exist:0", pull="missing")
    with pytest.raises(ImageNotFoundError, match="pulling it failed"):
        await pulling.start()


async def test_read_only_root_keeps_the_workspace_and_tmp_writable(deployment_factory, container_run_id):
    """SWE-bench image layout: the repository in the image at the workdir stays there and writable."""
    run_id = container_run_id
    deployment = deployment_factory("docker", run_id=run_id, workdir="/testbed", read_only_root=True)
    await deployment.start()
    await deployment.run("true")
    assert (await deployment.run("touch /etc/uag-x")).exit_code != 0  # root is read-only
    assert (await deployment.run("echo ok > /testbed/f && echo ok > /tmp/f && cat /testbed/f /tmp/f")).output == "ok\nok\n"
    await deployment.stop()
    assert labelled_containers(run_id) == []


async def test_read_only_root_with_a_seeded_workspace():
    """The anonymous volume at the workdir starts with the image's files (a SWE-bench image's /testbed)."""
    from tests import fixture_sources
    from tests.conftest import require_docker
    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.envs import AsyncSWEEnv
    from uni_agent_gym.instances import normalise

    require_docker()
    row = normalise(fixture_sources.derived_rows()["pytest-dev__pytest-7168"])
    await fixture_sources.ensure_image(row)
    env = AsyncSWEEnv(GymConfig.model_validate({"deployment": {"type": "docker", "read_only_root": True}, "env": {"workspace": "image"}}))
    try:
        await env.reset(options={"instance": row})
        status = await env.step({"name": "execute_bash", "arguments": {"command": "git status --porcelain && git log -1 --format=%P && touch x.py"}})
        assert status[0].strip() == row.base_commit and status[4]["exit_code"] == 0
    finally:
        await env.close()


def test_read_only_root_needs_a_workdir():
    import asyncio

    from uni_agent_gym.deployments import make_deployment
    from uni_agent_gym.errors import ConfigError

    with pytest.raises(ConfigError, match="needs deployment.workdir"):
        asyncio.run(make_deployment({"type": "docker", "read_only_root": True}).start())


async def test_changes_read_from_the_overlay_layers_are_what_docker_diff_lists(deployment_factory):
    """The capture and the warm pool read a container's changes from its overlay2 layers on this host
    (milliseconds, where the daemon's diff takes a second or more): the same answer as `docker diff`."""
    from uni_agent_gym.deployments import overlay

    deployment = deployment_factory("docker")
    await deployment.start()
    result = await deployment.run(
        "mkdir -p /srv/new/deeper && echo a > /srv/new/deeper/f && echo b >> /etc/debian_version && rm -rf /etc/apt "
        "&& rm -rf /usr/share/doc && mkdir /usr/share/doc && echo c > /usr/share/doc/only && ln -s /etc /srv/link && mkfifo /srv/pipe"
    )
    assert result.exit_code == 0, result.output
    layers = overlay.layers(docker_client().api.inspect_container(deployment.container_id))
    require(layers is not None, "an engine whose overlay2 layers are readable from here (not a remote engine or another storage driver)")
    kinds = {0: "C", 1: "A", 2: "D"}
    daemon = {(kinds[item["Kind"]], item["Path"]) for item in docker_client().api.diff(deployment.container_id)}
    assert set(overlay.changes(layers)) == daemon
    assert ("D", "/usr/share/doc/xz-utils") in daemon and ("A", "/srv/new/deeper/f") in daemon
    assert await asyncio.to_thread(deployment.changes) == overlay.changes(layers)



async def test_a_container_without_a_session_through_the_public_calls(deployment_factory, container_run_id):
    """What a Ray node's host uses (`ray_host.py`): the container started with no shell session, shells spawned in
    it and commands run beside them, then removed, twice without harm. `start()` is the same calls plus a session."""
    from uni_agent_gym.errors import DeploymentNotStartedError

    deployment = deployment_factory("docker")
    container_id = await deployment.start_container()
    assert labelled_containers(container_run_id) == [container_id] == [deployment.container_id]
    with pytest.raises(DeploymentNotStartedError):
        await deployment.run("true")  # no session: that is the driver's, over the host's relay
    await deployment.run_beside(["touch", "/srv/beside"])
    assert ("A", "/srv/beside") in await asyncio.to_thread(deployment.changes)
    shell = await deployment.spawn_shell()
    await shell.write(b"echo shell-$((6*7)) && ls /srv\n")
    output = b""
    while b"beside" not in output:
        output += await asyncio.wait_for(shell.read(), 30)
    assert output == b"shell-42\nbeside\n"
    await shell.kill()
    await deployment.release_container()
    assert deployment.container_id is None and labelled_containers(container_run_id) == []
    await deployment.release_container()  # idempotent
    await deployment.start()  # the session's path: the same container calls
    assert labelled_containers(container_run_id) == [deployment.container_id]
    assert (await deployment.run("ls /srv")).output == ""

def test_containers_of_a_killed_test_session_are_found_and_those_of_a_live_one_are_not(docker_image, container_run_id):
    """A pytest killed mid-test (a machine restart) leaves its containers; the next session removes them
    before it starts, so its own end-of-suite check does not blame its last test for them."""
    from tests.conftest import remove_container, stale_test_containers

    dead_pid = 4_000_000  # above Linux's pid_max: no process has it
    client = docker_client()
    made = [
        client.api.create_container(docker_image, command="true", labels={LABEL: "1", RUN_ID_LABEL: run_id})
        for run_id in (f"pytest-{dead_pid}-abcd-t19", f"{container_run_id}-live")
    ]
    try:
        stale = {c["Id"] for c in stale_test_containers()}
        assert made[0]["Id"] in stale and made[1]["Id"] not in stale
    finally:
        for container in made:
            remove_container(container)


def sleeping_containers(image: str, run_ids: list[str]) -> list[str]:
    """Running containers labelled as uni-agent-gym's, one per run id (running: removing one takes the engine a
    moment, so two callers at it at once overlap)."""
    api = docker_client().api
    made = []
    for run_id in run_ids:
        made.append(api.create_container(image, command="sleep 600", labels={LABEL: "1", RUN_ID_LABEL: run_id})["Id"])
        api.start(made[-1])
    return made


def side_by_side(call, times: int = 2) -> list:
    """`call()` in `times` threads let go at the same moment; their results (an exception is raised here)."""
    import concurrent.futures
    import threading

    barrier = threading.Barrier(times)

    def at_once():
        barrier.wait(timeout=30)
        return call()

    with concurrent.futures.ThreadPoolExecutor(times) as pool:
        return [future.result() for future in [pool.submit(at_once) for _ in range(times)]]


def test_two_cleanups_at_once_remove_each_container_once_and_neither_fails(docker_image, container_run_id):
    """The engine answers the second remover of a container 409 "removal ... already in progress": two cleanups of
    one run (or a release beside a cleanup) must not fail on it, and between them every container goes."""
    from uni_agent_gym.deployments.docker import cleanup

    made = sleeping_containers(docker_image, [container_run_id] * 8)
    first, second = side_by_side(lambda: cleanup(container_run_id).removed)
    assert labelled_containers(container_run_id) == []
    assert not set(first) & set(second) and len(first) + len(second) == len(made)


def test_an_owner_is_alive_gone_or_unknown():
    """The owner label names one process for good: the same pid with another start time is a later process."""
    from uni_agent_gym.deployments.owner import owner_state, this_process

    host, pid, start = this_process().rsplit(":", 2)
    assert owner_state(this_process()) == "alive"
    assert owner_state(f"{host}:{pid}:{int(start) + 1}") == "gone"
    assert owner_state(f"{host}:4000000:1") == "gone"  # above Linux's pid_max
    assert owner_state(f"another-host:{pid}:{start}") == owner_state(None) == owner_state("garbage") == "unknown"


LEAVE_A_CONTAINER = """
import asyncio, os, sys
from uni_agent_gym.deployments import make_deployment

async def main():
    deployment = make_deployment({"type": "docker", "image": sys.argv[1], "run_id": sys.argv[2]})
    await deployment.start()
    print(deployment.container_id, flush=True)
    os._exit(0)  # a run that ended without stopping its sandbox (a crash, a kill)

asyncio.run(main())
"""


async def test_cleanup_removes_what_ended_runs_left_and_keeps_a_live_runs(deployment_factory, docker_image, container_run_id, capsys):
    """Two runs' containers: this process's (a live run) and one whose process ended without stopping it. By
    default `cleanup` takes only the ended run's, `--all` both, `--run-id` that run's alone; `--dry-run` lists."""
    import subprocess
    import sys

    from tests.conftest import remove_container
    from uni_agent_gym.cli import main

    live_run, ended_run = f"{container_run_id}-live", f"{container_run_id}-ended"
    live = deployment_factory("docker", run_id=live_run)
    await live.start()
    left = subprocess.run([sys.executable, "-c", LEAVE_A_CONTAINER, docker_image, ended_run], capture_output=True, text=True, timeout=120)
    assert left.returncode == 0, left.stderr
    assert labelled_containers(ended_run) == [left.stdout.strip()]
    name = {run: docker_client().containers.get(labelled_containers(run)[0]).name for run in (live_run, ended_run)}
    try:
        assert await asyncio.to_thread(main, ["cleanup", "--dry-run"]) in (0, None)
        out = capsys.readouterr().out
        removed = next(line for line in out.splitlines() if line.startswith("would remove"))
        assert name[ended_run] in removed and name[live_run] not in removed, out
        assert f"kept {name[live_run]}: its run is live: run {live_run}" in out
        assert await asyncio.to_thread(main, ["cleanup", "--all", "--dry-run"]) in (0, None)
        removed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("would remove"))
        assert name[ended_run] in removed and name[live_run] in removed
        assert len(labelled_containers(ended_run)) == len(labelled_containers(live_run)) == 1, "a dry run removes nothing"

        assert await asyncio.to_thread(main, ["cleanup", "--run-id", ended_run]) in (0, None)
        assert capsys.readouterr().out.splitlines()[0] == f"removed 1 container(s): {name[ended_run]}"
        assert labelled_containers(ended_run) == [] and len(labelled_containers(live_run)) == 1, "the other run's is left"
        assert (await live.run("echo alive")).output == "alive\n"
    finally:
        for container in labelled_containers(ended_run):
            remove_container({"Id": container})


def test_the_workers_of_a_run_sweep_a_killed_sessions_containers_at_once(docker_image, container_run_id):
    """Each parallel worker removes a killed session's containers as its session starts, the workers at the same
    moment (CI failed so: one worker's session fixture raised on the other's removal in progress, and every test of
    that worker errored)."""
    from tests.conftest import remove_container, stale_test_containers

    dead_pid = 4_000_000  # above Linux's pid_max: no process has it
    made = sleeping_containers(docker_image, [f"pytest-{dead_pid}-{container_run_id[-4:]}-t{n}" for n in range(8)])
    try:
        side_by_side(lambda: [remove_container(c) for c in stale_test_containers() if c["Id"] in made])
        assert not {c["Id"] for c in stale_test_containers()} & set(made)
    finally:
        for container in made:
            remove_container({"Id": container})


INNER_TEST = '''
import asyncio

import pytest

from uni_agent_gym.deployments import make_deployment


@pytest.mark.timeout(3)
async def test_hangs_holding_a_container(docker_image):
    deployment = make_deployment({"type": "docker", "image": docker_image})
    await deployment.start()
    print("started", deployment.container_id)
    await asyncio.sleep(120)  # never stops it: pytest's timeout ends the test
'''


def test_a_test_stopped_by_its_timeout_leaves_no_container(tmp_path, docker_image):
    """A pytest session of our fixtures (`-p tests.conftest`) whose test hangs holding a container until its
    pytest timeout: the test fails by its name, and once its teardown ran its container is gone."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-s", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
               "-o", "asyncio_mode=auto", str(tmp_path / "test_inner.py")]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 1 and "Timeout (>3.0s)" in output, output[-3000:]
    assert "test_hangs_holding_a_container left 1 container(s) behind" in output, output[-3000:]
    container_id = re.search(r"started (\w+)", output).group(1)
    assert [c for c in docker_client().containers.list(all=True, filters={"label": f"{LABEL}=1"}) if c.id == container_id] == []


@pytest.mark.parametrize("refusals, paused", [(2, True), (3, False)])
def test_a_freeze_that_does_not_settle_is_tried_again_three_times_in_all(monkeypatch, refusals, paused):
    """runc's "unable to freeze" (a freeze that did not settle in time, seen on a loaded machine) is tried again; a
    third refusal is the error. Faked: the engine (a real runc cannot be made to refuse on demand)."""
    import types

    import docker.errors

    from uni_agent_gym.deployments import docker as docker_deployment
    from uni_agent_gym.deployments import make_deployment
    from uni_agent_gym.errors import DeploymentError

    calls = []

    def pause(container_id):
        calls.append(container_id)
        if len(calls) <= refusals:
            raise docker.errors.APIError("500 Server Error", explanation=f"Cannot pause container {container_id}: OCI runtime pause failed: unable to freeze: unknown")

    deployment = make_deployment({"type": "docker", "image": "any:1"})
    deployment.container_id = "c0ffee"
    with monkeypatch.context() as patched:  # undone before the suite's own container check asks the engine
        patched.setattr(docker_deployment, "docker_client", lambda: types.SimpleNamespace(api=types.SimpleNamespace(pause=pause)))
        patched.setattr(docker_deployment.time, "sleep", lambda seconds: None)
        if paused:
            deployment.pause()
        else:
            with pytest.raises(DeploymentError, match="unable to freeze"):
                deployment.pause()
    assert calls == ["c0ffee"] * min(refusals + 1, 3)
