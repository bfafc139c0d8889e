"""The ray deployment on the test cluster of this machine (tests/ray_cluster.py: a head and two worker nodes on
loopback, each with its own dockerd, and a registry), against the docker deployment in the same run:

1. a command's round trip (`true`) relayed by the node's host vs the docker deployment directly;
2. a sandbox's start on a worker node that has the image, vs a docker start here;
3. getting an image onto a node whose engine has none (pulled from the registry: the base image, and an
   instance image, pytest-7168's);
4. toy episodes per minute (reset, the fix, finish, graded) with the sandboxes on 2 nodes vs on 1;
5. at scale (`--scale`, on two nodes of its own with 128 sandbox slots each, on the worker nodes' engines):
   the nodes' memory per sandbox beyond its container (their Ray processes' RSS: raylet, the node's sandbox host
   and every other process under `ray start`) at 32 and 128 open; start p50 / p90 of 32 and 128 started at once
   against docker at the same concurrency; 256 open at once, each running a command; and a driver with 32 open
   killed by SIGKILL: the seconds until no container of its job is left.

One machine shares its cores between the nodes, so 2 vs 1 shows what the placement costs, not the speed-up of
two real machines. Usage: python bench/ray_overhead.py [--runs N] [--episodes N] [--scale | --only-scale]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the test cluster's harness lives in tests/

import ray  # noqa: E402

from tests import fixture_sources  # noqa: E402
from tests import ray_cluster as harness  # noqa: E402
from uni_agent_gym import toy  # noqa: E402
from uni_agent_gym.config import GymConfig  # noqa: E402
from uni_agent_gym.deployments import make_deployment  # noqa: E402
from uni_agent_gym.deployments.registry import push  # noqa: E402
from uni_agent_gym.envs import AsyncSWEEnv  # noqa: E402
from uni_agent_gym.workspaces.base_images import bootstrap_base  # noqa: E402


async def round_trips(config: dict, runs: int) -> float:
    """Median ms of `true` in one sandbox of `config`."""
    deployment = make_deployment(config)
    await deployment.start()
    try:
        for _ in range(20):
            await deployment.run("true")
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            await deployment.run("true")
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1000
    finally:
        await deployment.stop()


async def starts(config: dict, runs: int) -> float:
    """Median seconds from start() to a shell that answers."""
    times = []
    for _ in range(runs):
        deployment = make_deployment(config)
        started = time.perf_counter()
        await deployment.start()
        times.append(time.perf_counter() - started)
        await deployment.stop()
    return statistics.median(times)


async def image_onto_a_bare_node(cluster: harness.Cluster, image: str) -> float:
    """Seconds for a sandbox start on a node whose engine has no image at all (a new dockerd with an empty data
    root, on a node of its own), the pull of `image` from the registry included."""
    shutil.rmtree(harness.ROOT / "bare", ignore_errors=True)
    engine, engine_pid = harness.start_engine("bare")
    resource = "uag_bench_bare"
    node_pid = cluster.start_node("bare", "127.0.0.7", {resource: 1}, engine)
    try:
        deployment = make_deployment(cluster.deployment(image=image, resource=resource))
        started = time.perf_counter()
        await deployment.start()
        took = time.perf_counter() - started
        await deployment.stop()
        return took
    finally:
        harness.terminate(node_pid)
        harness.terminate(engine_pid)
        shutil.rmtree(harness.ROOT / "bare", ignore_errors=True)


class _Ping:
    async def ping(self) -> int:
        return 1


async def bare_ray_call(cluster: harness.Cluster, runs: int) -> float:
    """Median ms of a no-op async actor call on a worker node: Ray's own floor on this machine."""
    actor = ray.remote(_Ping).options(num_cpus=0, resources={cluster.resource: 1}).remote()
    await actor.ping.remote()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await actor.ping.remote()
        times.append(time.perf_counter() - started)
    ray.kill(actor)
    return statistics.median(times) * 1000


async def episodes_per_minute(config: GymConfig, instance: dict, episodes: int) -> float:
    async def one() -> float:
        env = AsyncSWEEnv(config)
        try:
            await env.reset(options={"instance": instance})
            await env.step({"name": "str_replace_editor", "arguments": {
                "command": "str_replace", "path": f"{env.repo_dir}/stats.py",
                "old_str": "return sum(values) / (len(values) - 1)", "new_str": "return sum(values) / len(values)"}})  # fmt: skip
            _, reward, _, _, _ = await env.step({"name": "finish", "arguments": {}})
            return reward
        finally:
            await env.close()

    started = time.perf_counter()
    rewards = await asyncio.gather(*(one() for _ in range(episodes)))
    assert rewards == [1.0] * episodes, rewards
    return episodes / (time.perf_counter() - started) * 60


async def measure(cluster: harness.Cluster, image: str, instance_image: str, runs: int, episodes: int) -> None:
    docker_ms = await round_trips({"type": "docker", "image": image}, runs)
    ray_ms = await round_trips(cluster.deployment(image=image), runs)
    floor_ms = await bare_ray_call(cluster, runs)
    print(f"round trip of `true`: docker {docker_ms:.3f} ms, ray (relayed by the node's host) {ray_ms:.3f} ms: "
          f"+{ray_ms - docker_ms:.3f} ms, {ray_ms / docker_ms:.1f}x; a no-op Ray actor call alone: {floor_ms:.3f} ms "
          f"({runs} runs each, medians)")  # fmt: skip
    docker_start = await starts({"type": "docker", "image": image}, 5)
    ray_start = await starts(cluster.deployment(image=image), 5)
    print(f"sandbox start: docker here {docker_start:.2f} s, ray on a worker node {ray_start:.2f} s (median of 5)")
    for name in (image, instance_image):
        bare = await image_onto_a_bare_node(cluster, name)
        size = subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", name], capture_output=True, text=True).stdout.strip()
        print(f"image onto a node that has none: {bare:.1f} s for {name} ({int(size) / 1e6:.0f} MB) pulled from the registry "
              f"and started, {bare - ray_start:.1f} s more than a start with the image there")  # fmt: skip
    with tempfile.TemporaryDirectory() as cache:
        instance = await toy.toy_instance(cache)
        rates = {}
        node = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and n["NodeManagerAddress"] == harness.WORKERS["node1"])
        for label, options in (("1 node", {"node": node}), ("2 nodes", {})):
            config = GymConfig.model_validate({"deployment": cluster.deployment(image=image, **options), "env": {"cache_dir": cache}})
            rates[label] = await episodes_per_minute(config, instance, episodes)
        print(f"toy episodes per minute ({episodes} at once, graded): 1 node {rates['1 node']:.1f}, 2 nodes {rates['2 nodes']:.1f}: "
              f"{rates['2 nodes'] / rates['1 node']:.2f}x (one machine's cores shared by both nodes)")  # fmt: skip


SCALE_RESOURCE = "uag_bench_scale"
SCALE_NODES = {"scale-a": ("127.0.0.12", "node1"), "scale-b": ("127.0.0.13", "node2")}  # name: (address, whose engine)


def rss_mib(pids: list[int]) -> float:
    """The resident memory of `pids` and every process under them, in MiB."""
    import psutil

    total = 0
    for pid in pids:
        root = psutil.Process(pid)
        for process in [root, *root.children(recursive=True)]:
            try:
                total += process.memory_info().rss
            except psutil.Error:
                pass
    return total / 2**20


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def started_at_once(configs: list[dict]) -> tuple[list, list[float]]:
    """`len(configs)` deployments started at once: the deployments and each one's seconds to a shell that answers."""
    deployments = [make_deployment(config) for config in configs]

    async def start(deployment) -> float:
        began = time.perf_counter()
        await deployment.start()
        return time.perf_counter() - began

    return deployments, list(await asyncio.gather(*(start(deployment) for deployment in deployments)))


async def stop_all(deployments: list) -> None:
    await asyncio.gather(*(deployment.stop() for deployment in deployments))


def containers_of_run(cluster: harness.Cluster, run_id: str) -> int:
    import docker

    count = 0
    for engine in cluster.engines.values():
        client = docker.DockerClient(base_url=engine)
        try:
            count += len(client.api.containers(all=True, filters={"label": f"uni-agent-gym.run-id={run_id}"}))
        finally:
            client.close()
    return count


async def scale(cluster: harness.Cluster, image: str, runs: int) -> None:
    """The figures of item 5 of the module docstring."""
    pids = [cluster.start_node(name, ip, {SCALE_RESOURCE: 128}, cluster.engines[engine]) for name, (ip, engine) in SCALE_NODES.items()]
    ray_config = cluster.deployment(image=image, resource=SCALE_RESOURCE, start_timeout=900)
    docker_config = {"type": "docker", "image": image}
    try:
        warm, _ = await started_at_once([ray_config] * 2)  # each node's host made (a fixed cost per node, below)
        await stop_all(warm)
        hosts_only = rss_mib(pids)
        print(f"the two scale nodes' Ray processes with their hosts up and no sandbox: {hosts_only:.0f} MiB")
        for count in (32, 128):
            docker_sandboxes, docker_starts = await started_at_once([docker_config] * count)
            await stop_all(docker_sandboxes)
            ray_sandboxes, ray_starts = await started_at_once([ray_config] * count)
            per_sandbox = (rss_mib(pids) - hosts_only) / count
            await stop_all(ray_sandboxes)
            print(f"{count} started at once: start p50 / p90 ray {percentile(ray_starts, 0.5):.2f} / {percentile(ray_starts, 0.9):.2f} s, "
                  f"docker {percentile(docker_starts, 0.5):.2f} / {percentile(docker_starts, 0.9):.2f} s "
                  f"(p50 {percentile(ray_starts, 0.5) / percentile(docker_starts, 0.5):.2f}x); "
                  f"the nodes' memory per sandbox beyond its container: {per_sandbox:.2f} MiB")  # fmt: skip
        docker_ms = await round_trips(docker_config, runs)
        ray_ms = await round_trips(ray_config, runs)
        print(f"round trip of `true` ({runs} runs, medians): docker {docker_ms:.3f} ms, ray {ray_ms:.3f} ms (+{ray_ms - docker_ms:.3f} ms)")
        sandboxes, starts = await started_at_once([ray_config] * 256)
        try:
            results = await asyncio.gather(*(sandbox.run("echo ok") for sandbox in sandboxes), return_exceptions=True)
            failed = sum(getattr(result, "output", None) != "ok\n" for result in results)  # an exception has no output
            print(f"256 open at once: {256 - failed} answered a command, {failed} failed; all started within {max(starts):.1f} s; "
                  f"nodes' memory per sandbox {(rss_mib(pids) - hosts_only) / 256:.2f} MiB")  # fmt: skip
        finally:
            await stop_all(sandboxes)
        run_id = f"bench-doomed-{os.getpid()}"
        driver = subprocess.Popen([sys.executable, "-c", harness.DRIVER, json.dumps({**ray_config, "run_id": run_id}), "32"], stdout=subprocess.PIPE, text=True)
        try:
            assert len(json.loads(await asyncio.to_thread(driver.stdout.readline))["containers"]) == 32
            assert containers_of_run(cluster, run_id) == 32
        finally:
            driver.kill()
            driver.wait()
        killed = time.perf_counter()
        while containers_of_run(cluster, run_id) and time.perf_counter() - killed < 120:
            await asyncio.sleep(0.25)
        left = containers_of_run(cluster, run_id)
        print(f"a driver with 32 open, SIGKILLed: {left} of its containers left after {time.perf_counter() - killed:.1f} s (nobody called cleanup)")
    finally:
        for pid in pids:
            harness.terminate(pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--scale", action="store_true", help="also measure at scale (item 5)")
    parser.add_argument("--only-scale", action="store_true", help="only measure at scale (item 5)")
    args = parser.parse_args()
    image = bootstrap_base("3.11", log=lambda message: None)
    instance = fixture_sources.derived_rows()["pytest-dev__pytest-7168"]
    instance_image = asyncio.run(fixture_sources.ensure_image(instance))
    cluster, started = harness.start()
    try:
        for name in (image, instance_image):
            push(name, cluster.registry)
        if not args.only_scale:
            asyncio.run(measure(cluster, image, instance_image, args.runs, args.episodes))
        if args.scale or args.only_scale:
            asyncio.run(scale(cluster, image, args.runs))
    finally:
        if started:
            harness.stop()


if __name__ == "__main__":
    main()
