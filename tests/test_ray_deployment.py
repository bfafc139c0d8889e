"""`deployment.type: ray` against a real cluster on this machine (`tests/ray_cluster.py`: a head and two worker
nodes on loopback, each worker with its own Docker engine, and a registry): where sandboxes land, how a
dead node shows, how images reach a node, and episodes graded on the agent's node. The contract suite
(`test_deployment_contract.py`) and the attack suite run on it too."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
import time

import pytest
import ray

from tests import fixture_sources
from tests import ray_cluster as harness
from tests.conftest import containers_of
from uni_agent_gym import toy
from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.errors import DeploymentError, SandboxDiedError
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.swebench import SWEBenchReward

pytestmark = pytest.mark.timeout(900)


def worker_node_ids() -> dict[str, str]:
    """Node id -> address of the cluster's two worker nodes."""
    return {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes() if node["Alive"] and node["NodeManagerAddress"] in harness.WORKERS.values()}


def test_the_harness_tells_its_processes_from_later_ones_that_have_their_pids():
    """A killed run leaves state.json naming pids that other processes may hold since (pid_max is 32768 on these
    machines): `running` must not take them for the cluster, nor `stop` kill them and all under them. A process is
    the cluster's only with the start time recorded for it, also after the round trip through state.json."""
    import dataclasses
    import json

    process = subprocess.Popen(["sleep", "60"])
    try:
        cluster = harness.Cluster()
        cluster.record("ray-head", process.pid)
        read_back = harness.Cluster(**json.loads(json.dumps(dataclasses.asdict(cluster))))
        assert cluster.ours("ray-head") and read_back.ours("ray-head")
        assert not harness.Cluster(pids=cluster.pids, started={"ray-head": cluster.started["ray-head"] - 60}).ours("ray-head")
        assert harness.Cluster(pids=cluster.pids).ours("ray-head")  # a state.json of before start times: alive is all it can say
    finally:
        process.kill()
        process.wait()
    assert not cluster.ours("ray-head")


async def test_a_grpo_group_of_8_lands_on_both_nodes(ray_cluster, docker_image, tmp_path):
    """Eight episodes of the toy task at once (SPREAD): both worker nodes hold some; the four that fix the bug
    earn 1.0 and the four that change nothing 0.0."""
    instance = await toy.toy_instance(str(tmp_path / "cache"))
    config = GymConfig.model_validate({"deployment": ray_cluster.deployment(image=docker_image), "env": {"cache_dir": str(tmp_path / "cache")}})
    envs = [AsyncSWEEnv(config) for _ in range(8)]

    async def episode(env: AsyncSWEEnv, fixes: bool) -> tuple[str, float]:
        await env.reset(options={"instance": instance})
        node = env.deployment.node["node_id"]
        if fixes:
            _, _, _, _, info = await env.step({"name": "str_replace_editor", "arguments": {
                "command": "str_replace", "path": f"{env.repo_dir}/stats.py",
                "old_str": "return sum(values) / (len(values) - 1)", "new_str": "return sum(values) / len(values)"}})  # fmt: skip
            assert info["error"] is None, info
        _, reward, terminated, _, _ = await env.step({"name": "finish", "arguments": {}})
        assert terminated
        return node, reward

    try:  # every episode ends before the sandboxes are released, a failed one too
        results = await asyncio.gather(*(episode(env, index % 2 == 0) for index, env in enumerate(envs)), return_exceptions=True)
    finally:
        await asyncio.gather(*(env.close() for env in envs))
    for result in results:
        if isinstance(result, BaseException):
            raise result
    assert [reward for _, reward in results] == [1.0, 0.0] * 4
    assert {node for node, _ in results} == set(worker_node_ids()), "SPREAD puts the group on both worker nodes"


@pytest.mark.parametrize("instance_id", ["pytest-dev__pytest-7168", "sphinx-doc__sphinx-8595"])
async def test_fixture_gold_earns_1_and_empty_0_graded_in_a_fresh_sandbox_on_the_agents_node(ray_cluster, instance_id, monkeypatch):
    """The official grading of a fixture instance on ray: the agent's container on a worker node, its patch
    the daemon's diff read into a fresh container on that same node, the tests run there. Sphinx's runs with a mirror
    configured and `env.workspace: auto`, which took the mirror checked out into the deployment's plain image (no
    Python environment: `python: No such file or directory`, gold 0.0); a task that needs its environment runs on its
    image, as on docker."""
    from uni_agent_gym.workspaces import start_state

    instance = normalise(fixture_sources.derived_rows()[instance_id])
    await pushed_instance_image(instance, ray_cluster)
    env_section = fixture_sources.env_section("ray", [instance])
    if instance_id == "sphinx-doc__sphinx-8595":
        env_section.update(workspace="auto", mirrors={instance.repo: str(fixture_sources.repo_mirror(instance.repo))})
    config = GymConfig.model_validate({"deployment": ray_cluster.deployment(), "env": env_section})
    gradings: list[str] = []
    agents: list[str] = []
    open_task = start_state.open_task

    async def recording(task, gym, *, grading=False):
        result = await open_task(task, gym, grading=grading)
        if grading:
            gradings.append(result.deployment.node["node_id"])
        return result

    monkeypatch.setattr(start_state, "open_task", recording)
    for patch, expected in ((instance.patch, 1.0), ("", 0.0)):
        env = AsyncSWEEnv(config, reward=SWEBenchReward.from_config(config))
        try:
            await env.reset(options={"instance": instance})
            agents.append(env.deployment.node["node_id"])
            if patch:
                await env.deployment.write_file("/tmp/gold.diff", patch)
                _, _, _, _, info = await env.step({"name": "execute_bash", "arguments": {"command": "git apply /tmp/gold.diff && rm /tmp/gold.diff"}})
                assert info["exit_code"] == 0, info
            _, reward, _, _, info = await env.step({"name": "finish", "arguments": {}})
        finally:
            await env.close()
        assert (reward, info["reward_report"]["sandbox"]) == (expected, "fresh"), info["reward_report"]
    assert len(gradings) == 2 and gradings == agents, (gradings, agents)


async def test_the_warm_pool_reuses_a_scrubbed_sandbox_on_its_node(ray_cluster, container_run_id):
    """pool_size on ray: the second episode gets the first one's container, on the same node, scrubbed back
    (the scrub's `docker diff` and reset run through the node's actor); the grading sandboxes pool per node."""
    from uni_agent_gym.deployments.pool import drain_pools

    instance = normalise(fixture_sources.derived_rows()["pytest-dev__pytest-7168"])
    await pushed_instance_image(instance, ray_cluster)
    deployment = ray_cluster.deployment(pool_size=1, run_id=container_run_id)
    config = GymConfig.model_validate({"deployment": deployment, "env": fixture_sources.env_section("ray", [instance])})
    env = AsyncSWEEnv(config, reward=SWEBenchReward.from_config(config))
    seen = []
    try:
        for _ in range(2):
            await env.reset(options={"instance": instance})
            seen.append((env.deployment.container_id, env.deployment.node["node_id"]))
            state = await env.step({"name": "execute_bash", "arguments": {"command": "git status --porcelain; ls -A /tmp; echo new > NEW.txt; echo x > /tmp/x"}})
            assert state[0] == "Your command ran successfully and did not produce any output.", state[0]
            _, reward, _, _, info = await env.step({"name": "finish", "arguments": {}})
            assert reward == 0.0 and info["reward_report"]["status"] == "unresolved"
            pool = env.deployment.pool
            await env.close()
            await pool.settle()
        assert seen[0] == seen[1], "the second episode reuses the first one's container on its node"
        assert pool.stats["reused"] == 1 and pool.stats["evicted"] == 0, pool.stats
    finally:
        await env.close()
        await drain_pools()
    assert containers_of(container_run_id) == [], "drain_pools removes the idle sandboxes on every node"


async def pushed_instance_image(instance: dict, cluster) -> str:
    """The fixture's offline image, built here if missing and pushed to the cluster's registry."""
    image = await fixture_sources.ensure_image(instance)
    await asyncio.to_thread(cluster.push, image)
    return image


async def test_a_node_killed_mid_command_is_a_sandbox_death_within_call_timeout_and_its_next_host_removes_its_container(
    ray_cluster, docker_image, extra_node, container_run_id
):
    """The node's raylet is SIGKILLed while a long command runs: the call fails with the node named well
    before the command's own timeout, the infrastructure is blamed (the engine does not answer), `stop()`
    neither hangs nor raises, and once the node is back, its new host removes the container the dead one left
    on the engine, with nobody calling `cleanup`."""
    resource = f"uag_doomed_{secrets.token_hex(3)}"
    pid = extra_node({resource: 2})
    deployment = make_deployment(ray_cluster.deployment(image=docker_image, resource=resource, call_timeout=20))
    await deployment.start()
    container = deployment.container_id
    assert deployment.node["address"] == "127.0.0.5"
    command = asyncio.ensure_future(deployment.run("sleep 300", timeout=290))
    await asyncio.sleep(1)
    harness.kill_raylet(pid)
    with pytest.raises(SandboxDiedError, match=r"127\.0\.0\.5"):
        await asyncio.wait_for(command, 120)  # well before the command's own 290 s (the latency: bench/)
    assert not await deployment.engine_answers(), "a lost node is the infrastructure's failure, not the agent's"
    await asyncio.wait_for(deployment.stop(), 60)

    harness.terminate(pid)
    extra_node({resource: 2})  # the node comes back (same address, same engine)
    again = make_deployment(ray_cluster.deployment(image=docker_image, resource=resource, run_id=f"{container_run_id}-again"))
    await again.start()  # the new node's host is made, and reaps what the dead one left
    try:
        assert await eventually(lambda: container not in [c["Id"] for c in containers_of(container_run_id)], 60), "the next host removes it"
        assert (await again.run("echo ok")).output == "ok\n"
    finally:
        await again.stop()


async def eventually(condition, seconds: float) -> bool:
    """Whether `condition()` holds within `seconds` (asked every half second)."""
    deadline = time.monotonic() + seconds
    while not await asyncio.to_thread(condition):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.5)
    return True


async def test_a_node_that_freezes_mid_command_shows_within_call_timeout(ray_cluster, docker_image, extra_node):
    """The node's sandbox host stops (SIGSTOP: a frozen machine, a partition) while a command with a long timeout
    runs: Ray sees nothing die, and the heartbeat says so within call_timeout. (A node of the test's own: its
    host holds no other test's sandboxes.)"""
    import os
    import signal

    resource = f"uag_frozen_{secrets.token_hex(3)}"
    extra_node({resource: 1}, ip="127.0.0.10")
    deployment = make_deployment(ray_cluster.deployment(image=docker_image, resource=resource, call_timeout=8))
    await deployment.start()
    pid = int(deployment.node["pid"])
    command = asyncio.ensure_future(deployment.run("sleep 300", timeout=290))
    await asyncio.sleep(1)
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(SandboxDiedError, match="stopped answering"):
            await asyncio.wait_for(command, 120)  # well before the command's own 290 s
    finally:
        os.kill(pid, signal.SIGCONT)
    await deployment.stop()  # the node answers again: its container is removed


async def test_start_waits_for_a_free_sandbox_then_fails_naming_the_resource(ray_cluster, docker_image, extra_node):
    resource = f"uag_scarce_{secrets.token_hex(3)}"
    with pytest.raises(DeploymentError, match=f"No alive node of the Ray cluster offers 1 of resource '{resource}'"):
        await make_deployment(ray_cluster.deployment(image=docker_image, resource=resource)).start()
    extra_node({resource: 1}, ip="127.0.0.6")
    first = make_deployment(ray_cluster.deployment(image=docker_image, resource=resource))
    await first.start()
    try:
        second = make_deployment(ray_cluster.deployment(image=docker_image, resource=resource, start_timeout=3))
        started = time.monotonic()
        with pytest.raises(DeploymentError, match=f"No node offered a free 1 of resource '{resource}' within deployment.start_timeout"):
            await asyncio.wait_for(second.start(), 120)
        assert time.monotonic() - started >= 3, "it waited its start_timeout for the slot"
        await second.stop()
    finally:
        await first.stop()
    third = make_deployment(ray_cluster.deployment(image=docker_image, resource=resource, start_timeout=60))
    await third.start()  # the slot the first held is free again
    assert (await third.run("echo ok")).output == "ok\n"
    await third.stop()


def remove_everywhere(cluster, *names: str) -> None:
    """A test's images gone from this machine's engine and every node's."""
    subprocess.run(["docker", "rmi", "-f", *names], capture_output=True)
    for engine in cluster.engines.values():
        subprocess.run(["docker", "-H", engine, "rmi", "-f", *names], capture_output=True)


@pytest.mark.parametrize("named", ["plainly", "after another registry", "after this registry"])
async def test_an_image_built_on_the_head_reaches_a_worker_through_the_registry(ray_cluster, docker_image, tmp_path, named):
    """Built by this machine's engine, pushed with `images push`, run on a node whose engine never had it. An
    image already named after a registry goes by its name in this one (not `127.0.0.1:5055/127.0.0.1:6000/...`,
    which the engine refuses as an invalid reference)."""
    from uni_agent_gym.cli import main

    token = secrets.token_hex(4)
    prefix = {"plainly": "", "after another registry": "127.0.0.1:6000/", "after this registry": f"{ray_cluster.registry}/"}[named]
    image = f"{prefix}uni-agent-gym-test/registry-probe:{token}"
    (tmp_path / "Dockerfile").write_text(f"FROM {docker_image}\nRUN echo {token} > /probe.txt\n")
    subprocess.run(["docker", "build", "-q", "-t", image, str(tmp_path)], check=True, capture_output=True)
    try:
        assert main(["images", "push", "--registry", ray_cluster.registry, image]) in (0, None)
        deployment = make_deployment(ray_cluster.deployment(image=image))
        await deployment.start()
        try:
            assert (await deployment.run("cat /probe.txt")).output == f"{token}\n"
            assert deployment.node["address"] in harness.WORKERS.values()
        finally:
            await deployment.stop()
    finally:
        pushed = f"{ray_cluster.registry}/uni-agent-gym-test/registry-probe:{token}"
        remove_everywhere(ray_cluster, image, pushed)


async def test_the_harness_push_of_a_rebuilt_image_replaces_the_nodes_older_copy(ray_cluster, docker_image, tmp_path):
    """The test cluster's node engines outlive a run and a node that has an image does not pull it again
    (`pull: missing`), so `Cluster.push` (how every ray test sends its image) untags a node's copy that is not
    the image pushed: a fixture image rebuilt under its tag is then run as rebuilt, not as a node first pulled it."""
    image = f"uni-agent-gym-test/rebuilt-probe:{secrets.token_hex(4)}"
    pushed = f"{ray_cluster.registry}/{image}"
    built: list[str] = []  # the first build is left untagged (here and on the nodes): removed by id at the end

    def build(text: str) -> str:
        (tmp_path / "Dockerfile").write_text(f"FROM {docker_image}\nRUN echo {text} > /probe.txt\n")
        built.append(subprocess.run(["docker", "build", "-q", "-t", image, str(tmp_path)], check=True, capture_output=True, text=True).stdout.strip())
        return built[-1]

    def node_ids() -> dict[str, str]:
        return {name: subprocess.run(["docker", "-H", engine, "image", "inspect", "-f", "{{.Id}}", image], capture_output=True, text=True).stdout.strip()
                for name, engine in ray_cluster.engines.items()}  # fmt: skip

    try:
        first = build("first")
        await asyncio.to_thread(ray_cluster.push, image)
        for engine in ray_cluster.engines.values():  # both nodes ran the first build
            subprocess.run(["docker", "-H", engine, "pull", "-q", pushed], check=True, capture_output=True)
            subprocess.run(["docker", "-H", engine, "tag", pushed, image], check=True, capture_output=True)
        assert node_ids() == {name: first for name in ray_cluster.engines}
        second = build("second")
        await asyncio.to_thread(ray_cluster.push, image)
        assert node_ids() == {name: "" for name in ray_cluster.engines}, "the first build is untagged on every node"
        deployment = make_deployment(ray_cluster.deployment(image=image))
        await deployment.start()
        try:
            assert (await deployment.run("cat /probe.txt")).output == "second\n"
        finally:
            await deployment.stop()
        assert second in node_ids().values()
        await asyncio.to_thread(ray_cluster.push, image)  # a node holding the pushed image keeps it
        assert second in node_ids().values()
    finally:
        remove_everywhere(ray_cluster, image, pushed, *built)


async def test_an_image_no_registry_has_fails_with_what_to_push(ray_cluster):
    deployment = make_deployment(ray_cluster.deployment(image=f"uni-agent-gym-test/nowhere:{secrets.token_hex(4)}"))
    with pytest.raises(DeploymentError, match="uni-agent-gym images push --registry 127.0.0.1:5055 uni-agent-gym-test/nowhere"):
        await deployment.start()


async def test_a_cluster_without_the_resource_and_a_wrong_address_are_clear_errors(ray_cluster, docker_image):
    with pytest.raises(DeploymentError, match="ray start --resources"):
        await make_deployment(ray_cluster.deployment(image=docker_image, resource="nobody_offers_this")).start()
    script = (
        "import asyncio\nfrom uni_agent_gym.deployments import make_deployment\n"
        "asyncio.run(make_deployment({'type': 'ray', 'address': '127.0.0.9:1'}).start())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Cannot join a Ray cluster at deployment.address '127.0.0.9:1': nothing answers there" in done.stderr, done.stderr[-2000:]


async def test_a_driver_killed_by_sigkill_leaves_no_container_of_its_job_and_spares_another_drivers(
    ray_cluster, docker_image, extra_node, container_run_id, tmp_path
):
    """A driver process opens 16 sandboxes and is SIGKILLed: within 60 s no container of its job is left on the node,
    though nobody called `stop` or `cleanup`; this process's sandboxes on the same node and host run on. While the
    driver lives, `cleanup` (without --all) keeps its containers."""
    import json

    from uni_agent_gym.deployments.ray import cleanup_nodes
    from uni_agent_gym.deployments.ray_host import ended_jobs

    resource = f"uag_sigkill_{secrets.token_hex(3)}"
    extra_node({resource: 18}, ip="127.0.0.11")
    doomed_run = f"{container_run_id}-doomed"
    config = ray_cluster.deployment(image=docker_image, resource=resource, run_id=doomed_run)
    errors = open(tmp_path / "driver.err", "w+")
    driver = subprocess.Popen([sys.executable, "-c", harness.DRIVER, json.dumps(config), "16"], stdout=subprocess.PIPE, stderr=errors, text=True)
    ours = [make_deployment(ray_cluster.deployment(image=docker_image, resource=resource)) for _ in range(2)]
    try:
        line = await asyncio.wait_for(asyncio.to_thread(driver.stdout.readline), 300)
        assert line, f"the driver exited before its sandboxes were open: {(tmp_path / 'driver.err').read_text()[-2000:]}"
        opened = json.loads(line)
        assert len(opened["containers"]) == 16 and len(containers_of(doomed_run)) == 16
        await asyncio.gather(*(deployment.start() for deployment in ours))
        by_node, failed = await asyncio.to_thread(cleanup_nodes, ray_cluster.address, resource, dry_run=True)
        assert not failed and [name for result in by_node.values() for name in result.removed if doomed_run in name] == []
        assert len([name for result in by_node.values() for name in result.kept if doomed_run in name]) == 16, "a live job's are kept"
        assert opened["job"] not in ended_jobs()
        driver.kill()
        driver.wait()
        assert await eventually(lambda: opened["job"] in ended_jobs(), 30), "the cluster's job table says its job ended"
        assert await eventually(lambda: containers_of(doomed_run) == [], 60), "its host removed them"
        for deployment in ours:
            assert (await deployment.run("echo alive")).output == "alive\n"
    finally:
        driver.kill()
        driver.wait()
        errors.close()
        await asyncio.gather(*(deployment.stop() for deployment in ours))


async def test_a_shells_relay_answers_only_the_token_its_driver_got(ray_cluster, docker_image):
    """The node's relay listens on the node's address: a connection that does not bring a token the host gave out
    (a guess, or a token used once already) is closed without reaching any shell."""
    deployment = make_deployment(ray_cluster.deployment(image=docker_image))
    await deployment.start()
    try:
        _, token = await deployment._host_call("shell")
        address = (deployment.node["address"], deployment.node["relay_port"])

        async def claim(with_token: str) -> bytes:
            reader, writer = await asyncio.open_connection(*address)
            writer.write(with_token.encode() + b"echo relayed-$((6*7))\n")
            try:
                return await asyncio.wait_for(reader.read(1 << 16), 30)
            finally:
                writer.close()

        assert await claim(secrets.token_hex(16)) == b"", "a guessed token"
        assert b"relayed-42" in await claim(token), "the token the host gave out"
        assert await claim(token) == b"", "a token used once already"
        assert (await deployment.run("echo still")).output == "still\n", "the sandbox's own shell is untouched"
    finally:
        await deployment.stop()


async def test_each_container_operation_is_answered_on_the_node_and_any_other_call_refused(ray_cluster, docker_image, container_run_id):
    """The forwards made from the `ContainerSandbox` protocol reach the host's dispatch, which runs each on the
    node's container (blocking ones in a thread there) and hands back its value or its error; a name that is no
    operation is refused (`test_container_operations.py`: both are made from the one list)."""
    import io
    import tarfile

    from uni_agent_gym.deployments.container import OPERATIONS

    deployment = make_deployment(ray_cluster.deployment(image=docker_image, run_id=container_run_id))
    await deployment.start()
    try:
        container = deployment.container
        assert (await deployment.run("echo made > /srv/made")).exit_code == 0
        assert ("A", "/srv/made") in await asyncio.to_thread(container.changes)  # tuples: the pool makes a set of them
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            member = tarfile.TarInfo("srv/in.txt")
            member.size = 6
            tar.addfile(member, io.BytesIO(b"inside"))
        await asyncio.to_thread(container.write_archive, "/", archive.getvalue())
        heads = await asyncio.to_thread(container.read_heads, ["/srv/in.txt", "/srv/none"], 3)
        assert list(heads) == ["/srv/in.txt"] and heads["/srv/in.txt"][1] == b"ins"
        read = await asyncio.to_thread(lambda: container.read_archive("/srv/in.txt", max_bytes=1 << 20))  # by keyword too
        with tarfile.open(fileobj=io.BytesIO(read)) as tar:
            assert tar.extractfile("in.txt").read() == b"inside"
        assert await asyncio.to_thread(container.read_archive, "/srv/none", 1 << 20) is None
        await asyncio.to_thread(container.pause)
        await asyncio.to_thread(container.unpause)
        assert await container.isolate_network() is True
        await container.restore_network()
        assert (await deployment.run("cat /srv/made")).output == "made\n"
        assert await deployment.engine_answers()
        with pytest.raises(DeploymentError, match=r"answers only the container operations \(changes, .*\), not 'remove_everything'"):
            await deployment._host_call("call", "remove_everything")
        assert set(OPERATIONS) == {"changes", "read_archive", "read_heads", "write_archive", "pause", "unpause", "isolate_network", "restore_network"}
    finally:
        await deployment.stop()
