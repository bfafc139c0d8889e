"""What the model is told about calling tools when its chat template does not render them: the tools'
schemas and one example call, written in the conversation's format."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from uni_agent_gym.toolcalls.base import ToolCall, ToolCallFormat

TOOLS_PROMPT = """

Call a tool by writing one call in your reply, in exactly this format (this one runs `ls` with execute_bash):
{example}

The tools (OpenAI function schemas):
{schemas}"""


def example_call(tool_names: Sequence[str]) -> ToolCall:
    """A call to show: `execute_bash` running `ls` where that tool exists, else the first tool with no arguments."""
    if "execute_bash" in tool_names or not tool_names:
        return ToolCall("execute_bash", {"command": "ls"})
    return ToolCall(tool_names[0], {})


def tools_prompt(fmt: ToolCallFormat, schemas: list[dict[str, Any]]) -> str:
    """The system-prompt section that describes `schemas` and shows a call in `fmt`."""
    names = [schema.get("function", schema).get("name") for schema in schemas]
    example = fmt.write(example_call(names))
    text = TOOLS_PROMPT.format(example=example, schemas=json.dumps(schemas, indent=1))
    return text if "execute_bash" in names else text.replace("(this one runs `ls` with execute_bash)", f"(this one calls {names[0]})")
