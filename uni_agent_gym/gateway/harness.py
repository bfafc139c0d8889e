"""Running a black-box harness against one gateway session, on the host or inside the sandbox.

The command is bash and finds everything in its environment:

    OPENAI_BASE_URL, OPENAI_API_KEY        the session's OpenAI endpoint (.../sessions/ID/v1)
    ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY  the session's Anthropic endpoint (.../sessions/ID)
    UNI_AGENT_GYM_MODEL                    the model name the gateway serves
    UNI_AGENT_GYM_TASK_FILE                a file holding the task (the instance's problem statement)
    UNI_AGENT_GYM_REPO_DIR                 the repository, in the sandbox
    UNI_AGENT_GYM_INSTANCE_ID
    UNI_AGENT_GYM_CONTAINER                (host, docker) the sandbox's container, for `docker exec`
    UNI_AGENT_GYM_OUTPUT_DIR               (host) a scratch directory for the harness's own files, removed after

On the host the command runs in its own process group, killed whole at the timeout or on cancel; in the
sandbox it runs in the sandbox's shell, whose timeout interrupts it there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from uni_agent_gym.config import _Strict
from uni_agent_gym.workspaces.episode import Episode

SANDBOX_TASK_FILE = "/tmp/uni_agent_gym_task.md"


class HarnessConfig(_Strict):
    """How to run the harness of a gateway episode."""

    command: str = Field(description="bash command that runs the harness (see uni_agent_gym.gateway.harness for its environment)")
    where: Literal["host", "sandbox"] = Field("host", description="Run it on the host (beside the gateway) or in the sandbox's shell.")
    timeout: float = Field(3600.0, gt=0, description="Seconds the harness may run; then it is killed (exit reason timeout).")
    env: dict[str, str] = Field(default_factory=dict, description="More environment variables for the command.")
    output_limit: int = Field(20_000, ge=0, description="Characters of the harness's output kept (the tail), for the record.")


@dataclass(frozen=True)
class HarnessResult:
    """How the harness ended."""

    exit_code: int | None
    timed_out: bool
    output: str  # the tail of its stdout and stderr
    duration: float


def harness_environment(url: str, session_id: str, model_name: str, task_file: str, repo_dir: str, instance_id: str) -> dict[str, str]:
    """The variables every harness gets (the host-only ones are added by `run_harness`)."""
    return {
        "OPENAI_BASE_URL": f"{url}/sessions/{session_id}/v1",
        "OPENAI_API_KEY": "uni-agent-gym",
        "ANTHROPIC_BASE_URL": f"{url}/sessions/{session_id}",
        "ANTHROPIC_API_KEY": "uni-agent-gym",
        "UNI_AGENT_GYM_MODEL": model_name,
        "UNI_AGENT_GYM_TASK_FILE": task_file,
        "UNI_AGENT_GYM_REPO_DIR": repo_dir,
        "UNI_AGENT_GYM_INSTANCE_ID": instance_id,
    }


async def run_harness(
    config: HarnessConfig,
    *,
    episode: Episode,
    url: str,
    session_id: str,
    model_name: str,
) -> HarnessResult:
    """Run `config.command` against the session at `url`, on the episode's task in its sandbox, until it exits or its
    timeout passes."""
    deployment, instance, repo_dir = episode.deployment, episode.task, episode.repo_dir
    task = instance.problem_statement or ""
    started = time.monotonic()
    if config.where == "sandbox":
        await deployment.write_file(SANDBOX_TASK_FILE, task)
        variables = {**harness_environment(url, session_id, model_name, SANDBOX_TASK_FILE, repo_dir, instance.instance_id), **config.env}
        exports = "".join(f"export {key}={shlex.quote(value)}; " for key, value in variables.items())
        result = await deployment.run(f"{exports}cd {shlex.quote(repo_dir)} && {config.command}", timeout=config.timeout)
        output = result.output[-config.output_limit :] if config.output_limit else ""
        return HarnessResult(result.exit_code, result.timed_out, output, time.monotonic() - started)
    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-harness-") as scratch:
        task_file = Path(scratch) / "task.md"
        await asyncio.to_thread(task_file.write_text, task)
        variables = harness_environment(url, session_id, model_name, str(task_file), repo_dir, instance.instance_id)
        variables["UNI_AGENT_GYM_OUTPUT_DIR"] = scratch
        container = deployment.container
        if container is not None and container.on_this_engine:  # a Ray node's container is not this engine's to address
            variables["UNI_AGENT_GYM_CONTAINER"] = container.container_id
        exit_code, timed_out, output = await _run_on_host(config, {**os.environ, **variables, **config.env}, scratch)
    return HarnessResult(exit_code, timed_out, output, time.monotonic() - started)


async def _run_on_host(config: HarnessConfig, env: dict[str, str], cwd: str) -> tuple[int | None, bool, str]:
    process = await asyncio.create_subprocess_exec(
        "bash", "-c", config.command, env=env, cwd=cwd, start_new_session=True,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    tail = bytearray()

    async def keep_tail() -> None:
        while chunk := await process.stdout.read(65536):
            tail.extend(chunk)
            del tail[: max(0, len(tail) - config.output_limit * 4)]  # bytes: up to 4 per character

    reader = asyncio.create_task(keep_tail())
    timed_out = False
    try:
        await asyncio.wait_for(process.wait(), timeout=config.timeout)
    except asyncio.TimeoutError:
        timed_out = True
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the harness and anything it left running
        await process.wait()
        with contextlib.suppress(asyncio.TimeoutError):  # a daemon that left the group may still hold the pipe
            await asyncio.wait_for(reader, timeout=5)
    output = tail.decode(errors="replace")[-config.output_limit :] if config.output_limit else ""
    return (None if timed_out else process.returncode), timed_out, output
