"""`finish`: the agent says it is done; the episode ends and is graded."""

from __future__ import annotations

from typing import Any

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.tools.base import Tool, ToolResult


class Finish(Tool):
    name = "finish"
    description = (
        "Call this when you have solved the task (or cannot make further progress). It ends the episode; your "
        "changes to the repository are then evaluated. Do not call it before you are done."
    )
    parameters = {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "Optional summary of what you changed."}},
        "required": [],
    }

    async def run(self, deployment: Deployment, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult("Finished: the episode ends and your changes will be evaluated.", terminal=True)
