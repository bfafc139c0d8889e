"""`uni-agent-gym demo`: the main job on a built-in default task, so a new user sees it work.

For now the job is the sandbox itself: start a deployment, run commands in its persistent shell
(state carries over, a hung command is interrupted, the session survives), move a file, stop.
"""

from __future__ import annotations

import asyncio
import time

from rich.console import Console
from rich.table import Table

from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.deployments.images import base_image_name, bootstrap_base
from uni_agent_gym.errors import ImageNotFoundError

DEMO_COMMANDS = [
    ("where are we", "pwd && uname -sr && python3 --version"),
    ("state persists: cd", "mkdir -p /tmp/demo && cd /tmp/demo"),
    ("state persists: export", "export GREETING='hello from the sandbox'"),
    ("both carried over", 'pwd && echo "$GREETING"'),
    ("stderr and exit codes", "ls /no/such/dir"),
    ("a hung command (2 s timeout)", "sleep 600"),
    ("the session survived", 'echo "still here in $(pwd)"'),
]


async def run_demo(config: GymConfig, console: Console) -> None:
    deployment = make_deployment(config.deployment)
    console.print(f"[bold]Starting a {config.deployment.type} deployment[/bold] ({_describe(config)})")
    started = time.monotonic()
    try:
        await deployment.start()
    except ImageNotFoundError:
        if config.deployment.type != "docker" or config.deployment.image != base_image_name("3.11"):
            raise
        console.print("The default base image is missing: building it offline with debootstrap (about a minute)")
        await asyncio.to_thread(bootstrap_base, "3.11", log=console.print)
        await deployment.start()
    console.print(f"started in {time.monotonic() - started:.2f} s\n")
    try:
        table = Table("step", "command", "exit", "output", "ms")
        for title, command in DEMO_COMMANDS:
            result = await deployment.run(command, timeout=2 if "sleep" in command else None)
            exit_text = "timed out" if result.timed_out else str(result.exit_code)
            table.add_row(title, command, exit_text, result.output.strip()[:80], f"{result.duration * 1000:.1f}")
        console.print(table)
        await deployment.write_file("/tmp/demo/notes.txt", "written by the host\n")
        read_back = (await deployment.run("cat /tmp/demo/notes.txt")).output.strip()
        console.print(f"file written from the host and read in the sandbox: {read_back!r}")
    finally:
        await deployment.stop()
    console.print("[green]stopped; the sandbox is removed[/green]")


def _describe(config: GymConfig) -> str:
    deployment = config.deployment
    return getattr(deployment, "image", None) or deployment.workdir or "temporary directory"
