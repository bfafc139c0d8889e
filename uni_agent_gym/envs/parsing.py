"""Turn an action (a tool-call dict or a model's text) into one checked `ToolCall`.

Text formats understood, as models emit them:
- OpenAI tool-call JSON: `{"name": ..., "arguments": {...}}` (arguments may be a JSON string), the
  `{"type": "function", "function": {...}}` wrapper, `{"tool_calls": [...]}`, optionally in a ``` fence;
- Qwen / Hermes: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`;
- R2E-Gym / SWE-agent XML: `<function=name><parameter=key>value</parameter></function>`.
Anything else, or more than one call in a turn, is a `ToolCallFormatError` whose message tells the
model what was wrong and what is valid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from uni_agent_gym.tools import Tool, ToolCallFormatError

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)</parameter>", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class ToolCall:
    """One call of one tool, with arguments that fit its schema."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def parse_action(action: Any, tools: dict[str, Tool]) -> ToolCall:
    """The single tool call in `action`, checked against `tools`; `ToolCallFormatError` otherwise."""
    if isinstance(action, ToolCall):
        calls = [(action.name, action.arguments)]
    elif isinstance(action, dict):
        calls = [_from_mapping(action)]
    elif isinstance(action, str):
        calls = _from_text(action, tools)
    else:
        raise ToolCallFormatError(f"Expects a tool call as a dict or model text, got {type(action).__name__}")
    if not calls:
        raise ToolCallFormatError(
            "No tool call found. Call exactly one tool per turn, e.g. "
            '<tool_call>{"name": "execute_bash", "arguments": {"command": "ls"}}</tool_call>. '
            f"Available tools: {', '.join(tools)}"
        )
    if len(calls) > 1:
        names = ", ".join(name for name, _ in calls)
        raise ToolCallFormatError(f"Expects exactly one tool call per turn, got {len(calls)} ({names}). Call one tool, then wait for its result.")
    name, arguments = calls[0]
    if name not in tools:
        raise ToolCallFormatError(f"Unknown tool {name!r}. Available tools: {', '.join(tools)}")
    return ToolCall(name, tools[name].check_arguments(arguments))


def _from_mapping(call: dict[str, Any]) -> tuple[str, Any]:
    if call.get("type") == "function" and isinstance(call.get("function"), dict):
        call = call["function"]
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCallFormatError(f"A tool call needs a string 'name', got keys {sorted(call)}")
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolCallFormatError(f"The arguments of {name} are not valid JSON: {exc}") from None
    return name, arguments


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolCallFormatError(f"Invalid JSON in {where}: {exc}") from None


def _from_text(text: str, tools: dict[str, Tool]) -> list[tuple[str, Any]]:
    hermes = [body.strip() for body in _TOOL_CALL.findall(text)]
    if hermes:
        calls = []
        for body in hermes:
            data = _json(body, "<tool_call>")
            if not isinstance(data, dict):
                raise ToolCallFormatError(f"A <tool_call> must hold a JSON object, got {type(data).__name__}")
            calls.append(_from_mapping(data))
        return calls
    functions = _FUNCTION.findall(text)
    if functions:
        return [(name, _xml_arguments(name, body, tools)) for name, body in functions]
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    candidate = fenced.group(1) if fenced else stripped
    if candidate.startswith(("{", "[")):
        data = _json(candidate, "the tool call")
        items = data.get("tool_calls", [data]) if isinstance(data, dict) else data
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise ToolCallFormatError("A JSON tool call must be an object with 'name' and 'arguments'")
        return [_from_mapping(item) for item in items]
    return []


def _xml_arguments(name: str, body: str, tools: dict[str, Tool]) -> dict[str, Any]:
    """XML parameters are text; those the schema types as integer, number, boolean or array are parsed as JSON."""
    properties = tools[name].parameters.get("properties", {}) if name in tools else {}
    arguments: dict[str, Any] = {}
    for key, raw in _PARAMETER.findall(body):
        value = raw[1:] if raw.startswith("\n") else raw
        value = value[:-1] if value.endswith("\n") else value
        if properties.get(key, {}).get("type") in ("integer", "number", "boolean", "array"):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass  # left as text: the schema check reports the type
        arguments[key] = value
    return arguments
