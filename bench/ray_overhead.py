"""The ray deployment on the test cluster of this machine (tests/ray_cluster.py: a head and two worker nodes on
loopback, each with its own dockerd, and a registry), against the docker deployment in the same run:

1. a command's round trip (`true`) through the node's actor vs the docker deployment directly;
2. a sandbox's start on a worker node that has the image, vs a docker start here;
3. getting an image onto a node whose engine has none (pulled from the registry: the base image, and an
   instance image, pytest-7168's);
4. toy episodes per minute (reset, the fix, finish, graded) with the sandboxes on 2 nodes vs on 1.

One machine shares its cores between the nodes, so 2 vs 1 shows what the placement costs, not the speed-up of
two real machines. Usage: python bench/ray_overhead.py [--runs N] [--episodes N]
"""

from __future__ import annotations

import argparse
import asyncio
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
    print(f"round trip of `true`: docker {docker_ms:.3f} ms, ray (through the node's actor) {ray_ms:.3f} ms: "
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--episodes", type=int, default=8)
    args = parser.parse_args()
    image = bootstrap_base("3.11", log=lambda message: None)
    instance = fixture_sources.derived_rows()["pytest-dev__pytest-7168"]
    instance_image = asyncio.run(fixture_sources.ensure_image(instance))
    cluster, started = harness.start()
    try:
        for name in (image, instance_image):
            push(name, cluster.registry)
        asyncio.run(measure(cluster, image, instance_image, args.runs, args.episodes))
    finally:
        if started:
            harness.stop()


if __name__ == "__main__":
    main()
