"""The tokenizer's own parser: transformers' `tokenizer.parse_response` with the `response_schema` that
a tokenizer can ship (transformers >= 4.57). Where a model's makers wrote one, it is theirs to know, so
the gym uses it rather than its own shapes; it is still checked against the template (`detect.py`)."""

from __future__ import annotations

from typing import Any

from uni_agent_gym.errors import ToolCallFormatError
from uni_agent_gym.toolcalls.base import (
    ParsedResponse,
    ToolCall,
    ToolCallFormat,
    ToolSchemas,
    call_from_mapping,
    parameter_properties,
    text_value,
)
from uni_agent_gym.toolcalls.template import call_text, tokenizer_name


def has_tool_call_schema(tokenizer: Any) -> bool:
    """Whether the tokenizer ships a `response_schema` that parses tool calls (and transformers can use it)."""
    schema = getattr(tokenizer, "response_schema", None)
    return callable(getattr(tokenizer, "parse_response", None)) and isinstance(schema, dict) and "tool_calls" in schema.get("properties", {})


class ResponseSchemaFormat(ToolCallFormat):
    """Parses with `tokenizer.parse_response`; writes a call by rendering it through the chat template."""

    name = "response_schema"

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.families = f"{tokenizer_name(tokenizer)} (its tokenizer's response_schema)"

    def parse(self, text: str, tools: ToolSchemas = None) -> ParsedResponse:
        try:
            parsed = self.tokenizer.parse_response(text)
        except (ValueError, TypeError, KeyError) as exc:
            lines = [line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
            reason = next((line.removeprefix("Error: ") for line in lines if line.startswith("Error: ")), lines[0])
            raise ToolCallFormatError(f"The tool call does not fit the response schema of {tokenizer_name(self.tokenizer)}: {reason}") from None
        parsed = parsed if isinstance(parsed, dict) else {}
        properties = parameter_properties(tools)
        calls = tuple(self._call(item, properties) for item in parsed.get("tool_calls") or [])
        content = parsed.get("content")
        return ParsedResponse(content.strip() if isinstance(content, str) else "", calls)

    @staticmethod
    def _call(item: Any, properties: dict[str, dict[str, Any]]) -> ToolCall:
        """Schemas give `{"name", "arguments"}` or OpenAI's `{"type": "function", "function": {...}}`;
        key/value schemas give every value as text, typed here by the tool's schema."""
        call = call_from_mapping(item)
        if not isinstance(call.arguments, dict):
            return call
        schemas = properties.get(call.name, {})
        return ToolCall(call.name, {k: text_value(v, schemas.get(k)) if isinstance(v, str) else v for k, v in call.arguments.items()})

    def write(self, call: ToolCall) -> str:
        return call_text(self.tokenizer, call).strip()
