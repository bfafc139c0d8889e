"""`uni-agent-gym demo`: one full episode of the built-in toy task, played by a scripted policy.

The toy repository has a real bug and a failing test; the policy explores with the tools, fixes the
bug with `str_replace_editor` and calls `finish`; the episode is graded by the task's tests. It runs
on docker when an engine is reachable (building the base image offline on first use), else locally: also where
the base image is missing and this host cannot build it (no debootstrap, not root).
"""

from __future__ import annotations

import asyncio
import json
import time

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from uni_agent_gym import toy
from uni_agent_gym.config import GymConfig, LocalDeploymentConfig
from uni_agent_gym.deployments.sites import site_of
from uni_agent_gym.workspaces.base_images import BootstrapUnavailable, base_image_name, bootstrap_base
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.errors import DeploymentError


async def prepare_deployment(config: GymConfig, console: Console) -> GymConfig:
    """Docker needs an engine and the base image, built here if missing: where either cannot be had, the episode runs
    on the local deployment instead, after one line that says why and what would enable docker."""
    if not site_of(config.deployment).engine_here:
        return config
    from uni_agent_gym.deployments.docker import docker_client

    try:
        await asyncio.to_thread(docker_client)
    except DeploymentError as exc:
        return _local_instead(config, console, str(exc))
    if config.deployment.image == (name := base_image_name("3.11")):
        try:
            await asyncio.to_thread(bootstrap_base, "3.11", log=lambda message: console.print(f"[dim]{message}[/dim]"))
        except BootstrapUnavailable as exc:
            return _local_instead(config, console, f"The base image {name} is missing and cannot be built here: {exc}.")
    return config


def _local_instead(config: GymConfig, console: Console, why: str) -> GymConfig:
    console.print(Text(f"{why} Running the episode on the local deployment instead.", style="yellow"), soft_wrap=True)
    return config.model_copy(update={"deployment": LocalDeploymentConfig()})


async def run_demo(config: GymConfig, console: Console) -> float:
    config = await prepare_deployment(config, console)
    env = AsyncSWEEnv(config)
    console.print(f"[bold]Toy task on a {config.deployment.type} deployment[/bold]")
    started = time.monotonic()
    try:
        prompt, info = await env.reset()
        title = Text(f"reset: {info['instance_id']} ({env.last_timings['reset']:.2f} s)")
        console.print(Panel(Text(prompt.strip()), title=title, expand=False))
        reward = 0.0
        for action in toy.scripted_solution(env.repo_dir):
            observation, reward, terminated, truncated, info = await env.step(action)
            title = Text(f"step {info['turn']}: {action['name']} {json.dumps(action['arguments'])[:100]}")
            console.print(Panel(Text(_shorten(observation)), title=title, title_align="left", expand=False))
            if terminated or truncated:
                break
        report = info.get("reward_report") or {}
        console.print(
            f"[bold]exit reason:[/bold] {info['exit_reason']}   [bold]reward:[/bold] {reward}   "
            f"[bold]tests:[/bold] exit code {report.get('exit_code')}   "
            f"[bold]episode:[/bold] {time.monotonic() - started:.2f} s"
        )
    finally:
        await env.close()
    console.print("[green]the sandbox is released[/green]")
    return reward


def _shorten(text: str, lines: int = 14) -> str:
    parts = text.rstrip("\n").split("\n")
    return "\n".join(parts if len(parts) <= lines else parts[:lines] + [f"... ({len(parts) - lines} more lines)"])
