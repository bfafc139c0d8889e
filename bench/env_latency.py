"""Env speed against plain Docker, measured in one run on this machine:

- step latency: `execute_bash true` and an editor `view` through `AsyncSWEEnv.step` vs `docker exec` per command;
- reset latency: `reset()` on docker, cold (new container) and warm (`deployment.pool_size`: the previous
  episode's container scrubbed and reused), for the toy task (repository uploaded) and, when its image exists, a
  SWE-bench instance image (repository in the image), vs `docker run` + a first `docker exec`; also what the
  scrub costs in `close()`;
- throughput: N envs stepping `execute_bash true` concurrently on one event loop (steps/s, p50/p99 step latency,
  host memory per env).

Usage: python bench/env_latency.py [--steps 200] [--envs 1 8 32 64]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import subprocess
import time
import json
from pathlib import Path

from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments.docker import docker_client, image_exists
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.workspaces.base_images import base_image_name, bootstrap_base
from uni_agent_gym.deployments.pool import drain_pools
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.instances import image_name

SHARED_ROWS = Path(__file__).resolve().parents[2] / "shared" / "swebench" / "derived.jsonl"
IMAGE_INSTANCE = "pytest-dev__pytest-7168"  # a SWE-bench instance image, if this machine has built it

BASH_TRUE = {"name": "execute_bash", "arguments": {"command": "true"}}
VIEW = {"name": "str_replace_editor", "arguments": {"command": "view", "path": "/testbed/stats.py"}}


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def percentile_ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def timed_steps(env: AsyncSWEEnv, action: dict, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await env.step(action)
        samples.append(time.perf_counter() - started)
    return samples


def time_calls(call, count: int) -> list[float]:
    """Seconds each of `count` calls of `call()` took."""
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def docker_exec_baseline(container: str, count: int) -> list[float]:
    return time_calls(lambda: subprocess.run(["docker", "exec", container, "true"], check=True), count)


def docker_run_baseline(image: str, count: int) -> list[float]:
    """`docker run` + a first `docker exec`, timed; the container is removed outside the timing."""
    started_containers: list[str] = []

    def run_and_exec() -> None:
        run = ["docker", "run", "-d", "--init", image, "sleep", "infinity"]
        container = subprocess.run(run, check=True, capture_output=True, text=True).stdout.strip()
        started_containers.append(container)
        subprocess.run(["docker", "exec", container, "true"], check=True)

    try:
        return time_calls(run_and_exec, count)
    finally:
        subprocess.run(["docker", "rm", "-f", *started_containers], check=False, capture_output=True)


async def episode_latencies(config: GymConfig, options: dict, count: int) -> tuple[list[float], list[float], float]:
    """Seconds of `reset()` and of `close()` over `count` one-step episodes (the first, cold one dropped),
    and the mean seconds of a background scrub (0 without a pool)."""
    env = AsyncSWEEnv(config)
    resets, closes, pool = [], [], None
    for _ in range(count + 1):
        started = time.perf_counter()
        await env.reset(options=options)
        resets.append(time.perf_counter() - started)
        await env.step(BASH_TRUE)
        pool = getattr(env.deployment, "pool", None)
        started = time.perf_counter()
        await env.close()
        closes.append(time.perf_counter() - started)
        if pool is not None:
            await pool.settle()  # the scrub runs in the background; the next reset takes the scrubbed container
    scrub = pool.stats["scrub_seconds"] / max(1, pool.stats["reused"] + pool.stats["evicted"]) if pool else 0.0
    await drain_pools()
    return resets[1:], closes[1:], scrub


async def reset_table(run_baseline: list[float]) -> None:
    tasks = [("toy task (uploaded)", {}, {})]
    if SHARED_ROWS.is_file() and image_exists(image_name(IMAGE_INSTANCE)):
        row = next(json.loads(line) for line in SHARED_ROWS.read_text().splitlines() if IMAGE_INSTANCE in line)
        tasks.append((f"{IMAGE_INSTANCE} (image)", {"instance": row}, {"workspace": "image"}))
    for name, options, env in tasks:
        for pool_size, label in ((0, "cold"), (1, "warm")):
            config = GymConfig.model_validate({"deployment": {"type": "docker", "pool_size": pool_size}, "env": env})
            resets, closes, scrub = await episode_latencies(config, options, 5)
            print(f"reset {label} {name:32s}: {median_ms(resets):7.1f} ms median   close {median_ms(closes):6.1f} ms"
                  + (f" (+ {scrub * 1000:.0f} ms scrub in the background)" if scrub else "")
                  + f"   vs docker run + exec {median_ms(run_baseline):6.1f} ms   ratio {median_ms(run_baseline) / median_ms(resets):5.2f}x")


async def main(steps: int, env_counts: list[int]) -> None:
    config = GymConfig.model_validate({"env": {"max_turns": 10**6}})
    env = AsyncSWEEnv(config)
    await env.reset()
    for _ in range(20):
        await env.step(BASH_TRUE)
    bash = await timed_steps(env, BASH_TRUE, steps)
    view = await timed_steps(env, VIEW, steps)
    exec_baseline = docker_exec_baseline(env.deployment.container_id, 30)
    await env.close()
    run_baseline = docker_run_baseline(base_image_name("3.11"), 5)

    print(f"step  execute_bash true : {median_ms(bash):7.3f} ms median   vs docker exec {median_ms(exec_baseline):6.1f} ms   ratio {median_ms(exec_baseline) / median_ms(bash):5.0f}x")
    print(f"step  editor view       : {median_ms(view):7.3f} ms median   vs docker exec {median_ms(exec_baseline):6.1f} ms   ratio {median_ms(exec_baseline) / median_ms(view):5.0f}x")
    await reset_table(run_baseline)

    for count in env_counts:
        envs = [AsyncSWEEnv(config) for _ in range(count)]
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        await asyncio.gather(*(e.reset() for e in envs))
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        per_env_steps = max(10, steps // count)
        started = time.perf_counter()
        samples = await asyncio.gather(*(timed_steps(e, BASH_TRUE, per_env_steps) for e in envs))
        elapsed = time.perf_counter() - started
        flat = [s for env_samples in samples for s in env_samples]
        print(
            f"throughput N={count:3d}: {len(flat) / elapsed:8.0f} steps/s   p50 {percentile_ms(flat, 0.5):6.2f} ms   "
            f"p99 {percentile_ms(flat, 0.99):6.2f} ms   host memory ~{max(0, rss_after - rss_before) / 1024 / count:.2f} MiB/env (peak RSS growth)"
        )
        await asyncio.gather(*(e.close() for e in envs))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 8, 32, 64])
    args = parser.parse_args()
    try:
        docker_client()
    except DeploymentError as exc:  # `make bench` goes on with the next bench
        print(f"skipped: {exc}")
        raise SystemExit(0)
    bootstrap_base("3.11", log=lambda message: None)
    asyncio.run(main(args.steps, args.envs))
