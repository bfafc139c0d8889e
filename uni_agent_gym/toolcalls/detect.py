"""The tool-call format of a tokenizer, taken from its chat template: the template is the specification.

The template renders an assistant turn that calls a probe tool (with a quoted, multi-line, non-ASCII
string and an integer); the format is the first known shape that reads exactly that call back from
the rendering. A tokenizer that ships a `response_schema` is parsed with it instead, once it has read
the probe back too. A template that renders the call in no known shape is an
`UnknownToolCallFormatError` that names the tokenizer and shows the rendering; one that does not
render tool calls at all has no format of its own (None), and the gym's prompt then says the format.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from uni_agent_gym.errors import ToolCallFormatError
from uni_agent_gym.tokenizer_loading import load_tokenizer
from uni_agent_gym.toolcalls.base import ToolCall, ToolCallFormat, UnknownToolCallFormatError
from uni_agent_gym.toolcalls.registry import LENIENT, TEMPLATE_FORMATS, get_format
from uni_agent_gym.toolcalls.schema import ResponseSchemaFormat, has_tool_call_schema
from uni_agent_gym.toolcalls.template import call_text, tokenizer_name

PROBE = ToolCall("uniagentgym_probe", {"text": 'say "hé"\n  ✓ done', "count": 7})
PROBE_TOOLS = {"uniagentgym_probe": {"type": "object", "properties": {"text": {"type": "string"}, "count": {"type": "integer"}}}}
_cache: dict[str, ToolCallFormat | None] = {}


def detect_format(tokenizer: Any) -> ToolCallFormat | None:
    """The format the tokenizer's chat template writes tool calls in (None: it writes none), found once
    per template and cached."""
    schema = getattr(tokenizer, "response_schema", None)
    identity = f"{tokenizer_name(tokenizer)}\0{getattr(tokenizer, 'chat_template', None)}\0{json.dumps(schema, sort_keys=True, default=str)}"
    key = hashlib.sha256(identity.encode()).hexdigest()
    if key not in _cache:
        _cache[key] = _detect(tokenizer)
    return _cache[key]


def _detect(tokenizer: Any) -> ToolCallFormat | None:
    rendered = call_text(tokenizer, PROBE)
    if PROBE.name not in rendered:
        return None
    candidates = [ResponseSchemaFormat(tokenizer)] if has_tool_call_schema(tokenizer) else list(TEMPLATE_FORMATS)
    readings = []
    for fmt in candidates:
        try:
            calls = list(fmt.parse(rendered, PROBE_TOOLS).tool_calls)
        except ToolCallFormatError as exc:
            readings.append(f"{fmt.name}: {exc}")
            continue
        if calls == [PROBE]:
            return fmt
        readings.append(f"{fmt.name}: read {calls}")
    if has_tool_call_schema(tokenizer):
        raise UnknownToolCallFormatError(
            f"The response_schema of {tokenizer_name(tokenizer)} does not read back the tool call its own chat template "
            f"writes ({readings[0]}). The template wrote:\n{rendered}"
        )
    raise UnknownToolCallFormatError(
        f"The chat template of {tokenizer_name(tokenizer)} writes tool calls in a shape the gym does not know, so its "
        f"model's calls cannot be parsed the way it was trained. The template wrote this for the call {PROBE}:\n"
        f"{rendered}\nKnown shapes: {', '.join(fmt.name for fmt in TEMPLATE_FORMATS)}. Set model.tool_format to one of them "
        "if the model was trained on it, or give the tokenizer a response_schema (transformers' parse_response)."
    )


def resolve_format(name: str, tokenizer: Any = None) -> ToolCallFormat:
    """The format of a run: `name` if it is not "auto"; for "auto" the chat template's own (`tokenizer` is
    a tokenizer or its path), or the lenient default when there is no tokenizer or its template writes
    no tool calls."""
    if name != "auto":
        return get_format(name)
    if tokenizer is None:
        return LENIENT
    if isinstance(tokenizer, (str, Path)):
        tokenizer = load_tokenizer(str(tokenizer))
    return detect_format(tokenizer) or LENIENT
