"""Turn an action (a tool-call dict or a model's text) into one checked `ToolCall`.

Text is read in the conversation's tool-call format (`uni_agent_gym.toolcalls`): the chat template's
own when a driver knows the model's tokenizer, else the lenient default (Hermes `<tool_call>` JSON,
`<function=...>` XML, or bare / fenced JSON). No call, a malformed one, more than one, an unknown
tool or arguments that do not fit the tool's schema are a `ToolCallFormatError` whose message tells
the model what was wrong and shows a call in its format.
"""

from __future__ import annotations

from typing import Any

from uni_agent_gym.toolcalls import LENIENT, ToolCall, ToolCallFormat, example_call
from uni_agent_gym.toolcalls.base import call_from_mapping
from uni_agent_gym.tools import Tool, ToolCallFormatError

__all__ = ["ToolCall", "parse_action"]


def parse_action(action: Any, tools: dict[str, Tool], tool_format: ToolCallFormat = LENIENT) -> ToolCall:
    """The single tool call in `action`, checked against `tools`; `ToolCallFormatError` otherwise."""
    if isinstance(action, ToolCall):
        calls = [action]
    elif isinstance(action, dict):
        calls = [call_from_mapping(action)]
    elif isinstance(action, str):
        example = tool_format.write(example_call(list(tools)))
        try:
            calls = list(tool_format.parse(action, {name: tool.parameters for name, tool in tools.items()}).tool_calls)
        except ToolCallFormatError as exc:
            raise ToolCallFormatError(f"{str(exc).rstrip('.')}. A well-formed call looks like:\n{example}") from None
        if not calls:
            raise ToolCallFormatError(f"No tool call found. Call exactly one tool per turn, e.g.\n{example}\nAvailable tools: {', '.join(tools)}")
    else:
        raise ToolCallFormatError(f"Expects a tool call as a dict or model text, got {type(action).__name__}")
    if len(calls) > 1:
        names = ", ".join(call.name for call in calls)
        raise ToolCallFormatError(f"Expects exactly one tool call per turn, got {len(calls)} ({names}). Call one tool, then wait for its result.")
    name, arguments = calls[0].name, calls[0].arguments
    if name not in tools:
        raise ToolCallFormatError(f"Unknown tool {name!r}. Available tools: {', '.join(tools)}")
    return ToolCall(name, tools[name].check_arguments(arguments))
