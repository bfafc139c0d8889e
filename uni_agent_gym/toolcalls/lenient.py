"""The gym's own text format when no template says otherwise: what `env.step(text)` always understood."""

from __future__ import annotations

from uni_agent_gym.toolcalls.base import ParsedResponse, ToolCall, ToolCallFormat, ToolSchemas
from uni_agent_gym.toolcalls.json_formats import BareJson, Hermes
from uni_agent_gym.toolcalls.xml_formats import XmlFunction


class Lenient(ToolCallFormat):
    """Hermes `<tool_call>` JSON if the text has a `<tool_call>`, else `<function=...>` XML if it has one,
    else the whole text as JSON; prompts show the Hermes form."""

    name = "lenient"
    families = "any model told the format in the system prompt (no chat template, or one that writes no tool calls)"

    def __init__(self) -> None:
        self.hermes, self.xml, self.json = Hermes(), XmlFunction(), BareJson()

    def parse(self, text: str, tools: ToolSchemas = None) -> ParsedResponse:
        hermes = self.hermes.parse(text, tools)
        if hermes.tool_calls:
            return hermes
        xml = self.xml.parse(text, tools)
        return xml if xml.tool_calls else self.json.parse(text, tools)

    def write(self, call: ToolCall) -> str:
        return self.hermes.write(call)
