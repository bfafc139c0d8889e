"""What every tool-call format shares: the parsed call, the parse result, and the format interface.

A format reads the tool calls out of a model's text (`parse`) and writes a call the way the format's
models were trained to (`write`, for prompts and for the example in a format-error message). Text
formats carry no types (XML and key/value formats write `7` and `"7"` alike), so `parse` takes the
tools' JSON schemas and gives a value the type its parameter declares.
"""

from __future__ import annotations

import abc
import ast
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from uni_agent_gym.errors import ToolCallFormatError, UniAgentGymError

# name -> JSON schema of its parameters, or OpenAI tool schemas ({"type": "function", "function": {...}})
ToolSchemas = Mapping[str, Mapping[str, Any]] | Sequence[Mapping[str, Any]] | None


class UnknownToolCallFormatError(UniAgentGymError, ValueError):
    """A chat template writes tool calls in no shape the gym knows; the message names the tokenizer and
    shows the rendering, so nobody parses the model's calls with the wrong rules."""


@dataclass(frozen=True)
class ToolCall:
    """One call of one tool."""

    name: str
    arguments: Any = field(default_factory=dict)  # a dict when well formed; the tool's schema check says otherwise


@dataclass(frozen=True)
class ParsedResponse:
    """A model's turn split into its text and its tool calls (none: a plain answer)."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()


class Found(NamedTuple):
    """One call a format found, with the span of text it came from."""

    start: int
    end: int
    call: ToolCall


class ToolCallFormat(abc.ABC):
    """How one family of models writes tool calls in text."""

    name: str
    families: str  # who writes it, for docs and error messages

    @abc.abstractmethod
    def parse(self, text: str, tools: ToolSchemas = None) -> ParsedResponse:
        """The calls in `text` and the text around them; `ToolCallFormatError` when a call is malformed."""

    @abc.abstractmethod
    def write(self, call: ToolCall) -> str:
        """`call` as the format's models write it."""

    def __repr__(self) -> str:
        return f"<tool-call format {self.name}>"


class SpanFormat(ToolCallFormat):
    """A format whose calls are spans of the text, found by `_find`; the rest is the content."""

    wrappers: tuple[str, ...] = ()  # tokens around a group of calls that belong to no call and to no content

    def parse(self, text: str, tools: ToolSchemas = None) -> ParsedResponse:
        found = list(self._find(text, parameter_properties(tools)))
        content, position = [], 0
        for start, end, _ in sorted(found, key=lambda item: (item.start, item.end)):
            content.append(text[position:start])
            position = max(position, end)
        content.append(text[position:])
        cleaned = "".join(content)
        for wrapper in self.wrappers:
            cleaned = cleaned.replace(wrapper, "")
        return ParsedResponse(cleaned.strip(), tuple(item.call for item in found))

    @abc.abstractmethod
    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        """Each call in `text`, in order; `properties` are the tools' parameter schemas by tool name."""


def parameter_properties(tools: ToolSchemas) -> dict[str, dict[str, Any]]:
    """Tool name -> its parameters' `properties`, from OpenAI tool schemas or a name -> parameters mapping."""
    if not tools:
        return {}
    if isinstance(tools, Mapping):
        return {name: dict(schema.get("properties") or {}) for name, schema in tools.items()}
    properties = {}
    for tool in tools:
        function = tool.get("function", tool)
        properties[function.get("name")] = dict((function.get("parameters") or {}).get("properties") or {})
    return properties


def text_value(raw: str, schema: Mapping[str, Any] | None) -> Any:
    """A parameter written as text, typed as its schema says: strings stay verbatim; other types are read as
    JSON (or as Python literals, `True` / `{'a': 1}`, which some templates write); what reads as neither
    stays text, and the tool's schema check reports the type."""
    declared = (schema or {}).get("type")
    types = {declared} if isinstance(declared, str) else set(declared or ())
    if not types or "string" in types:
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        pass
    try:
        value = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw
    return value if isinstance(value, (bool, int, float, list, dict)) else raw


def load_json(text: str, where: str) -> Any:
    """`json.loads`, its error said as a format error that names where the JSON was."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolCallFormatError(f"Invalid JSON in {where}: {exc}") from None


def decode_json_at(text: str, index: int, where: str) -> tuple[Any, int]:
    """The JSON value that starts at `text[index]` (leading spaces skipped) and where it ends."""
    while index < len(text) and text[index].isspace():
        index += 1
    try:
        return json.JSONDecoder().raw_decode(text, index)
    except json.JSONDecodeError as exc:
        raise ToolCallFormatError(f"Invalid JSON in {where}: {exc}") from None


def dumps(value: Any) -> str:
    """JSON as chat templates' `tojson` writes it (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def call_from_mapping(data: Any, *, arguments_key: str = "arguments", alias: str | None = None) -> ToolCall:
    """A call from `{"name": ..., "<arguments_key>": {...}}` (or OpenAI's `{"type": "function",
    "function": {...}}`); arguments given as a JSON string are decoded. `alias` is another key accepted
    for the arguments."""
    if not isinstance(data, dict):
        raise ToolCallFormatError(f"A tool call must be a JSON object, got {type(data).__name__}")
    if data.get("type") == "function" and isinstance(data.get("function"), dict):
        data = data["function"]
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCallFormatError(f"A tool call needs a string 'name', got keys {sorted(data)}")
    key = arguments_key if arguments_key in data or alias not in data else alias
    arguments = data.get(key, {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolCallFormatError(f"The arguments of {name} are not valid JSON: {exc}") from None
    return ToolCall(name, arguments)
