"""What a tool is: an OpenAI function schema plus host-side logic over a deployment.

Three kinds of failure take three paths: a malformed call (`ToolCallFormatError`, found before the
tool runs) and a refusal by the tool (`ToolError`, e.g. a missing file) both become text for the
model; an infrastructure fault (`DeploymentError`) propagates, so a dead sandbox is never trained on
as the model's mistake.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.errors import ToolCallFormatError, UniAgentGymError

__all__ = ["Tool", "ToolCallFormatError", "ToolError", "ToolResult"]

_JSON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}


class ToolError(UniAgentGymError):
    """The tool ran and refused; the message is the observation (SWE-agent wording)."""


@dataclass(frozen=True)
class ToolResult:
    """An observation for the model. `error` marks a refusal; `terminal` ends the episode (finish)."""

    output: str
    error: bool = False
    terminal: bool = False
    exit_code: int | None = None


class Tool(abc.ABC):
    """One tool the agent can call."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def check_arguments(self, arguments: Any) -> dict[str, Any]:
        """The arguments if they fit the schema, else `ToolCallFormatError` saying what is wrong."""
        if not isinstance(arguments, dict):
            raise ToolCallFormatError(f"Arguments of {self.name} must be a JSON object, got {type(arguments).__name__}")
        properties = self.parameters.get("properties", {})
        unknown = sorted(set(arguments) - set(properties))
        if unknown:
            raise ToolCallFormatError(
                f"Unknown argument(s) for {self.name}: {', '.join(unknown)}. Valid arguments: {', '.join(properties)}"
            )
        for name in self.parameters.get("required", []):
            if arguments.get(name) is None:
                raise ToolCallFormatError(f"Missing required argument {name!r} for {self.name}")
        for name, value in arguments.items():
            expected = properties[name].get("type")
            python_type = _JSON_TYPES.get(expected) if isinstance(expected, str) else None
            bad_bool = isinstance(value, bool) and expected in ("integer", "number")
            if value is not None and python_type and (not isinstance(value, python_type) or bad_bool):
                raise ToolCallFormatError(
                    f"Argument {name!r} of {self.name} must be of type {expected}, got {type(value).__name__}"
                )
        return arguments

    async def call(self, deployment: Deployment, arguments: dict[str, Any]) -> ToolResult:
        """Run the tool; a refusal comes back as an observation, infrastructure errors propagate."""
        try:
            return await self.run(deployment, arguments)
        except ToolError as exc:
            return ToolResult(str(exc), error=True)

    @abc.abstractmethod
    async def run(self, deployment: Deployment, arguments: dict[str, Any]) -> ToolResult:
        """Do the work; raise `ToolError` for a refusal the model should read."""
