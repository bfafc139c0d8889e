"""Tool calls in text, in each model family's own format, as its chat template writes them.

    fmt = detect_format(tokenizer)                  # from the chat template (None: it writes no calls)
    fmt = resolve_format("auto", tokenizer)         # ... or the lenient default; resolve_format("llama3-json")
    parsed = fmt.parse(text, tools=schemas)         # ParsedResponse(content, tool_calls); malformed: ToolCallFormatError
    fmt.write(ToolCall("execute_bash", {"command": "ls"}))   # a call as the format's models write it

The env parses `step(text)` with it, the eval agent and `UniAgentLoop` prompt with it, and the gateway
parses completions with it; nothing here needs an env or a sandbox.
"""

from __future__ import annotations

from uni_agent_gym.errors import ToolCallFormatError
from uni_agent_gym.toolcalls.base import ParsedResponse, ToolCall, ToolCallFormat, ToolSchemas, UnknownToolCallFormatError
from uni_agent_gym.toolcalls.detect import PROBE, detect_format, load_tokenizer, resolve_format
from uni_agent_gym.toolcalls.prompt import example_call, tools_prompt
from uni_agent_gym.toolcalls.registry import FORMATS, LENIENT, TEMPLATE_FORMATS, get_format
from uni_agent_gym.toolcalls.template import call_text

__all__ = [
    "FORMATS",
    "LENIENT",
    "PROBE",
    "TEMPLATE_FORMATS",
    "ParsedResponse",
    "ToolCall",
    "ToolCallFormat",
    "ToolCallFormatError",
    "ToolSchemas",
    "UnknownToolCallFormatError",
    "call_text",
    "detect_format",
    "example_call",
    "get_format",
    "load_tokenizer",
    "resolve_format",
    "tools_prompt",
]
