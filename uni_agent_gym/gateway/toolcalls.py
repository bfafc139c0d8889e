"""The one place the gateway reads tool calls out of a sampled turn, with the gym's parsers.

`parse_turn(text, tools, tokenizer)` has the call shape of issue #15's API, which parses in the model
family's own format taken from its chat template. When #15 lands, the body of `parse_turn` becomes

    try:
        return resolve_format("auto", tokenizer).parse(text, tools=tools)   # ParsedResponse(content, tool_calls)
    except ToolCallFormatError:
        return ParsedTurn(text)

(keeping the check that arguments are JSON objects). Today it reads the formats
`uni_agent_gym.envs.parsing` knows (Hermes/Qwen `<tool_call>`, XML `<function=...>`, bare JSON). A
malformed call (bad JSON, arguments that are not an object) is not an error here: the turn goes back to
the client as plain text, and the harness tells the model, as it would with any endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from uni_agent_gym.envs import parsing
from uni_agent_gym.tools import ToolCallFormatError


@dataclass(frozen=True)
class ToolCall:
    """One call the model wrote."""

    name: str
    arguments: Any


@dataclass(frozen=True)
class ParsedTurn:
    """A sampled turn split into its text and its tool calls (none: a plain answer)."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()


def parse_turn(text: str, tools: list[dict[str, Any]] | None, tokenizer: Any) -> ParsedTurn:
    """The tool calls in `text` when the request offered `tools`, and the text around them."""
    del tokenizer  # #15 takes the format from the tokenizer's chat template
    if not tools:
        return ParsedTurn(text)
    try:
        calls = parsing._from_text(text, {})
    except ToolCallFormatError:
        return ParsedTurn(text)
    if not calls or not all(isinstance(arguments, dict) for _, arguments in calls):
        return ParsedTurn(text)  # a call's arguments must be a JSON object in both APIs
    if parsing._TOOL_CALL.search(text):
        content = parsing._TOOL_CALL.sub("", text)
    elif parsing._FUNCTION.search(text):
        content = parsing._FUNCTION.sub("", text)
    else:  # the whole turn was the JSON call
        content = ""
    return ParsedTurn(content.strip(), tuple(ToolCall(name, arguments) for name, arguments in calls))
