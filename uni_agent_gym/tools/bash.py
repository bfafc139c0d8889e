"""`execute_bash`: a command in the sandbox's persistent shell."""

from __future__ import annotations

from typing import Any

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.tools.base import Tool, ToolResult

NO_OUTPUT = "Your command ran successfully and did not produce any output."


class ExecuteBash(Tool):
    name = "execute_bash"
    description = (
        "Run a bash command in the repository's sandbox. The shell is persistent: the working directory and "
        "exported variables carry over between calls. stdin is empty (interactive programs get EOF), stderr is "
        "merged into the output, long outputs are shortened in the middle, and a command that runs too long is "
        "interrupted. Use it to explore the repository, run tests and scripts."
    )
    parameters = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The bash command to run (may span lines)."}},
        "required": ["command"],
    }

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout

    async def run(self, deployment: Deployment, arguments: dict[str, Any]) -> ToolResult:
        result = await deployment.run(arguments["command"], timeout=self.timeout)
        parts = [result.output if result.output or result.exit_code != 0 or result.timed_out else NO_OUTPUT]
        if result.timed_out:
            parts.append(f"[The command timed out after {result.duration:.0f} s and was interrupted.]")
        elif result.exit_code != 0:
            parts.append(f"[exit code: {result.exit_code}]")
        if result.note:
            parts.append(f"[{result.note}]")
        output = parts[0] if len(parts) == 1 else parts[0].rstrip("\n") + "\n" + "\n".join(parts[1:])
        return ToolResult(output, exit_code=result.exit_code)
