"""Chat messages as the gateway keeps them, and the canonical key that says whether two are the same turn.

Internal shape: the OpenAI chat shape that chat templates render, with only what a template reads:

    {"role": "system" | "user" | "tool", "content": str}
    {"role": "assistant", "content": str, "tool_calls": [{"type": "function", "function": {"name": ..., "arguments": {...}}}]}

Canonical means "what the model saw", not how a client spells it: tool-call ids are dropped, argument
JSON is parsed and dumped again with sorted keys, text parts are joined, surrounding whitespace and the
fields templates ignore (`name` of a tool result, `refusal`, `function_call: null`, provider extras) do
not count. Two histories with the same keys are the same conversation to the model.
"""

from __future__ import annotations

import json
from typing import Any

from uni_agent_gym.errors import UniAgentGymError

APPENDABLE = ("user", "tool")  # what a chain can append after a sampled turn (RolloutCache's rule)
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}


class BadRequest(UniAgentGymError, ValueError):
    """A request the gateway will not serve; the message says what to change (HTTP 400)."""


def text_of(content: Any, where: str) -> str:
    """The text of a message's content: a string, None, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            if kind not in ("text", "input_text", "output_text"):
                raise BadRequest(f"{where}: only text content is supported, got a {kind!r} part")
            texts.append(str(part.get("text", "")))
        return "".join(texts)
    raise BadRequest(f"{where}: expects content as a string or a list of text parts, got {type(content).__name__}")


def arguments_of(arguments: Any) -> Any:
    """Tool-call arguments as data: a JSON string is parsed; one that is not JSON stays the string it is."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return arguments
    return {} if arguments is None else arguments


def tool_call(name: str, arguments: Any) -> dict[str, Any]:
    """One call in the internal shape."""
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def from_openai(messages: Any) -> list[dict[str, Any]]:
    """OpenAI chat messages in the internal shape; `BadRequest` names the first one that cannot be."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: expects a non-empty list of chat messages")
    result = []
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            role = message.get("role") if isinstance(message, dict) else None
            raise BadRequest(f"{where}: expects a role among {', '.join(_ROLES)}, got {role!r}")
        role = _ROLES[message["role"]]
        internal: dict[str, Any] = {"role": role, "content": text_of(message.get("content"), where)}
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    raise BadRequest(f"{where}.tool_calls: expects {{'function': {{'name': ..., 'arguments': ...}}}} entries")
                calls.append(tool_call(function["name"], arguments_of(function.get("arguments"))))
            internal["tool_calls"] = calls
        result.append(internal)
    return result


def from_openai_tools(tools: Any) -> list[dict[str, Any]] | None:
    """OpenAI function tools as the chat template takes them (None: no tools)."""
    if not tools:
        return None
    if not isinstance(tools, list) or not all(isinstance(tool, dict) and tool.get("type", "function") == "function" for tool in tools):
        raise BadRequest("tools: expects a list of {'type': 'function', 'function': {...}} tools")
    for tool in tools:
        if not isinstance(tool.get("function"), dict) or not isinstance(tool["function"].get("name"), str):
            raise BadRequest("tools: each tool needs function.name")
    return [{"type": "function", "function": tool["function"]} for tool in tools]


def message_key(message: dict[str, Any]) -> tuple:
    """The canonical key of an internal message (see the module docstring); a tuple of strings, so
    comparing two histories costs a string comparison per message, whatever their length."""
    calls = tuple(
        (call["function"]["name"], json.dumps(call["function"]["arguments"], sort_keys=True, ensure_ascii=False))
        for call in message.get("tool_calls") or ()
    )
    return (message["role"], message.get("content", "").strip(), calls)


def tools_key(tools: list[dict[str, Any]] | None) -> str:
    """The canonical key of a tool list (order kept: templates render tools in the order given)."""
    return json.dumps(tools or [], sort_keys=True, ensure_ascii=False)
