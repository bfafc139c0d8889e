"""`uni-agent-gym demo`: one full episode of the built-in toy task, played by a scripted policy.

The toy repository has a real bug and a failing test; the policy explores with the tools, fixes the
bug with `str_replace_editor` and calls `finish`; the episode is graded by the task's tests. It runs
on docker when an engine is reachable (building the base image offline on first use), else locally.
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
from uni_agent_gym.workspaces.base_images import base_image_name, bootstrap_base
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.errors import DeploymentError


async def prepare_deployment(config: GymConfig, console: Console) -> GymConfig:
    """Docker needs an engine and the base image: fall back to local without an engine, build the image if missing."""
    if config.deployment.images != "here":
        return config
    from uni_agent_gym.deployments.docker import docker_client

    try:
        await asyncio.to_thread(docker_client)
    except DeploymentError as exc:
        console.print(f"[yellow]{exc}\nRunning the demo on the local deployment instead.[/yellow]")
        return config.model_copy(update={"deployment": LocalDeploymentConfig()})
    if config.deployment.image == base_image_name("3.11"):
        await asyncio.to_thread(bootstrap_base, "3.11", log=lambda message: console.print(f"[dim]{message}[/dim]"))
    return config


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
