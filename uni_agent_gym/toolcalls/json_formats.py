"""Formats whose arguments are a JSON object: Hermes `<tool_call>`, Llama 3, bare JSON, Mistral, DeepSeek.

Each finds its own delimiters and nothing else, so a text in one of these shapes is not a call in
another (detection relies on it: see `detect.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from uni_agent_gym.errors import ToolCallFormatError
from uni_agent_gym.toolcalls.base import Found, SpanFormat, ToolCall, call_from_mapping, decode_json_at, dumps, load_json


class Hermes(SpanFormat):
    name = "hermes"
    families = "Qwen2.5, Qwen3, Hermes 2/3, most templates of the `<tool_call>` kind"
    _TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        for match in self._TAG.finditer(text):
            data = load_json(match.group(1).strip(), "<tool_call>")
            if not isinstance(data, dict):
                raise ToolCallFormatError(f"A <tool_call> must hold a JSON object, got {type(data).__name__}")
            yield Found(match.start(), match.end(), call_from_mapping(data))

    def write(self, call: ToolCall) -> str:
        return "<tool_call>\n" + dumps({"name": call.name, "arguments": call.arguments}) + "\n</tool_call>"


class BareJson(SpanFormat):
    """The whole reply is the call: an object, a list of them, `{"tool_calls": [...]}`, optionally in a
    ``` fence. `parameters` is taken for `arguments` (Llama-style) when `arguments` is absent."""

    name = "json"
    families = "OpenAI-style JSON written as the whole reply (models prompted without a template format)"
    _FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        stripped = text.strip()
        fenced = self._FENCE.match(stripped)
        candidate = fenced.group(1) if fenced else stripped
        if not candidate.startswith(("{", "[")):
            return
        data = load_json(candidate, "the tool call")
        items = data.get("tool_calls", [data]) if isinstance(data, dict) else data
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise ToolCallFormatError("A JSON tool call must be an object with 'name' and 'arguments'")
        for item in items:
            yield Found(0, len(text), call_from_mapping(item, alias="parameters"))

    def write(self, call: ToolCall) -> str:
        return dumps({"name": call.name, "arguments": call.arguments})


class Llama3Json(SpanFormat):
    """`{"name": ..., "parameters": {...}}`, after `<|python_tag|>` or not; several calls may follow each
    other (`;` between them, as Llama 3.1 sometimes writes)."""

    name = "llama3-json"
    families = "Llama 3.1, 3.2, 3.3 (custom tools)"
    _START = re.compile(r'<\|python_tag\|>|\{\s*"name"\s*:')

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        position = 0
        while (match := self._START.search(text, position)) is not None:
            tagged = match.group(0) == "<|python_tag|>"
            data, end = decode_json_at(text, match.end() if tagged else match.start(), "the tool call")
            if not isinstance(data, dict):
                raise ToolCallFormatError(f"A Llama tool call must be a JSON object, got {type(data).__name__}")
            if "parameters" not in data and "arguments" in data:
                raise ToolCallFormatError('Llama tool calls put the arguments under "parameters", not "arguments"')
            yield Found(match.start(), end, call_from_mapping(data, arguments_key="parameters"))
            position = end

    def write(self, call: ToolCall) -> str:
        return dumps({"name": call.name, "parameters": call.arguments})


class MistralList(SpanFormat):
    """`[TOOL_CALLS] [{"name": ..., "arguments": {...}, "id": ...}, ...]`."""

    name = "mistral"
    families = "Mistral 7B v0.3, Mistral Nemo, Mistral Small 3.1, Devstral Small 1.0 (`[TOOL_CALLS]` list)"
    _TAG = "[TOOL_CALLS]"

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        start = text.find(self._TAG)
        while start >= 0:
            data, end = decode_json_at(text, start + len(self._TAG), "[TOOL_CALLS]")
            items = data if isinstance(data, list) else [data]
            for item in items:
                yield Found(start, end, call_from_mapping(item))
            start = text.find(self._TAG, end)

    def write(self, call: ToolCall) -> str:
        return "[TOOL_CALLS] [" + dumps({"name": call.name, "arguments": call.arguments}) + "]"


class MistralArgs(SpanFormat):
    """`[TOOL_CALLS]name[ARGS]{...}`, with `[CALL_ID]id` before `[ARGS]` in some templates."""

    name = "mistral-args"
    families = "Mistral Small 3.2, Devstral Small 1.1, Magistral (`[TOOL_CALLS]name[ARGS]`)"
    _CALL = re.compile(r"\[TOOL_CALLS\]\s*([^\s\[\]{]+)\s*(?:\[CALL_ID\]\s*[^\s\[]*\s*)?\[ARGS\]")
    _TAG = "[TOOL_CALLS]"

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        start = text.find(self._TAG)
        while start >= 0:
            match = self._CALL.match(text, start)
            if match is None:
                raise ToolCallFormatError("Expects [TOOL_CALLS]name[ARGS]{...} (the tool's name, then its arguments as a JSON object)")
            arguments, end = decode_json_at(text, match.end(), f"the arguments of {match.group(1)}")
            yield Found(start, end, call_from_mapping({"name": match.group(1), "arguments": arguments}))
            start = text.find(self._TAG, end)

    def write(self, call: ToolCall) -> str:
        return f"[TOOL_CALLS]{call.name}[ARGS]{dumps(call.arguments)}"


def _deepseek_marker(marker: str) -> str:
    """A DeepSeek marker as a pattern that also matches it as a Metaspace decoder writes it (`▁` as a space): a
    tokenizer whose markers are pieces of its vocabulary, not added tokens, decodes `<｜tool▁sep｜>` as `<｜tool sep｜>`."""
    return re.escape(marker).replace("▁", "[▁ ]")


_DEEPSEEK_CALL = re.compile(
    rf"{_deepseek_marker('<｜tool▁call▁begin｜>')}(.*?){_deepseek_marker('<｜tool▁sep｜>')}(.*?)(?:{_deepseek_marker('<｜tool▁call▁end｜>')}|\Z)",
    re.DOTALL,
)
_DEEPSEEK_WRAPPERS = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool calls begin｜>", "<｜tool calls end｜>")


class DeepSeekV3(SpanFormat):
    """`<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` + a ```json fence with the arguments."""

    name = "deepseek-v3"
    families = "DeepSeek-V3, DeepSeek-R1 (and R1 distills)"
    wrappers = _DEEPSEEK_WRAPPERS
    _BODY = re.compile(r"\s*([^\s`]+)\s*```(?:json)?\s*(.*?)\s*```\s*", re.DOTALL)

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        for match in _DEEPSEEK_CALL.finditer(text):
            body = self._BODY.fullmatch(match.group(2))
            if match.group(1).strip() != "function" or body is None:
                raise ToolCallFormatError("Expects <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME, a newline, then the arguments in a ```json fence")
            arguments = load_json(body.group(2), f"the arguments of {body.group(1)}")
            yield Found(match.start(), match.end(), call_from_mapping({"name": body.group(1), "arguments": arguments}))

    def write(self, call: ToolCall) -> str:
        return (
            f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{call.name}\n```json\n"
            f"{dumps(call.arguments)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        )


class DeepSeekV31(SpanFormat):
    """`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`."""

    name = "deepseek-v3.1"
    families = "DeepSeek-V3.1, V3.1-Terminus, V3.2-Exp"
    wrappers = _DEEPSEEK_WRAPPERS

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        for match in _DEEPSEEK_CALL.finditer(text):
            name = match.group(1).strip()
            if not name or name == "function" or any(character.isspace() for character in name):
                raise ToolCallFormatError("Expects <｜tool▁call▁begin｜>NAME<｜tool▁sep｜> then the arguments as a JSON object")
            arguments = load_json(match.group(2).strip(), f"the arguments of {name}")
            yield Found(match.start(), match.end(), call_from_mapping({"name": name, "arguments": arguments}))

    def write(self, call: ToolCall) -> str:
        return f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{call.name}<｜tool▁sep｜>{dumps(call.arguments)}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
