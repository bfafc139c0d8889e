"""The one place the gateway reads tool calls out of a sampled turn: in the model family's own format,
taken from its chat template (`uni_agent_gym.toolcalls`), as the env and `UniAgentLoop` read them.

A malformed call (bad JSON, arguments that are not an object) is not an error here: the turn goes back
to the client as plain text, and the harness tells the model, as it would with any endpoint.
"""

from __future__ import annotations

from typing import Any

from uni_agent_gym.toolcalls import ParsedResponse, ToolCall, ToolCallFormatError, resolve_format

__all__ = ["ParsedResponse", "ToolCall", "parse_turn"]


def parse_turn(text: str, tools: list[dict[str, Any]] | None, tokenizer: Any) -> ParsedResponse:
    """The tool calls in `text` when the request offered `tools`, and the text around them."""
    if not tools:
        return ParsedResponse(text)
    try:
        parsed = resolve_format("auto", tokenizer).parse(text, tools=tools)
    except ToolCallFormatError:
        return ParsedResponse(text)
    if not all(isinstance(call.arguments, dict) for call in parsed.tool_calls):
        return ParsedResponse(text)  # a call's arguments must be a JSON object in both APIs
    return parsed
