"""Round trip of `true` through DockerDeployment's persistent session vs `docker exec` per command.

Both are measured in this run, on the same container, so the ratio holds on any machine.
Usage: python bench/deployment_latency.py [--image IMAGE] [--session-runs N] [--exec-runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time

from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.deployments.docker import docker_client
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.workspaces.base_images import base_image_name, bootstrap_base


async def measure(image: str, session_runs: int, exec_runs: int) -> None:
    deployment = make_deployment({"type": "docker", "image": image})
    await deployment.start()
    try:
        for _ in range(20):  # warm-up
            await deployment.run("true")
        session = []
        for _ in range(session_runs):
            started = time.perf_counter()
            await deployment.run("true")
            session.append(time.perf_counter() - started)

        exec_times = []
        for _ in range(exec_runs):
            started = time.perf_counter()
            subprocess.run(["docker", "exec", deployment.container_id, "true"], check=True)
            exec_times.append(time.perf_counter() - started)
    finally:
        await deployment.stop()

    session_ms, exec_ms = statistics.median(session) * 1000, statistics.median(exec_times) * 1000
    print(f"image: {image}")
    print(f"persistent session (DockerDeployment.run 'true'): median {session_ms:.3f} ms over {session_runs} runs")
    print(f"baseline (docker exec <container> true):          median {exec_ms:.1f} ms over {exec_runs} runs")
    print(f"ratio: the persistent session is {exec_ms / session_ms:.0f}x faster")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default=base_image_name("3.11"))
    parser.add_argument("--session-runs", type=int, default=1000)
    parser.add_argument("--exec-runs", type=int, default=50)
    args = parser.parse_args()
    try:
        docker_client()
    except DeploymentError as exc:  # `make bench` goes on with the next bench
        print(f"skipped: {exc}")
        return
    if args.image == base_image_name("3.11"):
        bootstrap_base("3.11", log=lambda message: None)
    asyncio.run(measure(args.image, args.session_runs, args.exec_runs))


if __name__ == "__main__":
    main()
