"""Formats that write each argument as text between tags: `<function=...><parameter=...>` and GLM's
`<arg_key>/<arg_value>`.

Values are verbatim text (code keeps its indentation); a value whose parameter is not a string is
read as JSON by `text_value`. Templates put a newline after `<parameter=k>` and before
`</parameter>`: one newline is dropped on each side, which gives back the exact value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from uni_agent_gym.errors import ToolCallFormatError
from uni_agent_gym.toolcalls.base import Found, SpanFormat, ToolCall, dumps, text_value

_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)</parameter>", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)


def _written(value: Any) -> str:
    return value if isinstance(value, str) else dumps(value)


def _function_call(name: str, body: str, properties: dict[str, dict[str, Any]]) -> ToolCall:
    schemas = properties.get(name, {})
    arguments: dict[str, Any] = {}
    for key, raw in _PARAMETER.findall(body):
        value = raw[1:] if raw.startswith("\n") else raw
        value = value[:-1] if value.endswith("\n") else value
        arguments[key] = text_value(value, schemas.get(key))
    return ToolCall(name, arguments)


def _write_function(call: ToolCall) -> str:
    parameters = "".join(f"<parameter={key}>\n{_written(value)}\n</parameter>\n" for key, value in call.arguments.items())
    return f"<function={call.name}>\n{parameters}</function>"


class XmlFunction(SpanFormat):
    """`<function=NAME><parameter=KEY>VALUE</parameter>...</function>`, wrapped in `<tool_call>` or not."""

    name = "xml"
    families = "SWE-agent and R2E-Gym XML function calls"

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        for match in _FUNCTION.finditer(text):
            yield Found(match.start(), match.end(), _function_call(match.group(1), match.group(2), properties))

    def write(self, call: ToolCall) -> str:
        return _write_function(call)


class HermesXml(SpanFormat):
    """`<tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>`; the
    `<tool_call>` wrapper is part of the format."""

    name = "hermes-xml"
    families = "Qwen3-Coder, Qwen3.5"

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        for match in _TOOL_CALL.finditer(text):
            functions = list(_FUNCTION.finditer(match.group(1)))
            if len(functions) != 1:
                raise ToolCallFormatError(
                    f"A <tool_call> must hold one <function=NAME>...</function> block, got {len(functions)}"
                )
            yield Found(match.start(), match.end(), _function_call(functions[0].group(1), functions[0].group(2), properties))

    def write(self, call: ToolCall) -> str:
        return f"<tool_call>\n{_write_function(call)}\n</tool_call>"


class Glm45(SpanFormat):
    """`<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>...</tool_call>`."""

    name = "glm-4.5"
    families = "GLM-4.5, GLM-4.6, GLM-4.7"
    _NAME = re.compile(r"\s*([^\s<>{}\[\]\"]+)\s*(?=<arg_key>|\Z)")
    _ARGUMENT = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)

    def _find(self, text: str, properties: dict[str, dict[str, Any]]) -> Iterator[Found]:
        for match in _TOOL_CALL.finditer(text):
            body = match.group(1)
            name = self._NAME.match(body)
            if name is None:
                raise ToolCallFormatError("Expects <tool_call>NAME, then each argument as <arg_key>KEY</arg_key><arg_value>VALUE</arg_value>")
            schemas = properties.get(name.group(1), {})
            arguments = {key.strip(): text_value(value, schemas.get(key.strip())) for key, value in self._ARGUMENT.findall(body)}
            yield Found(match.start(), match.end(), ToolCall(name.group(1), arguments))

    def write(self, call: ToolCall) -> str:
        arguments = "".join(f"<arg_key>{key}</arg_key>\n<arg_value>{_written(value)}</arg_value>\n" for key, value in call.arguments.items())
        return f"<tool_call>{call.name}\n{arguments}</tool_call>"
