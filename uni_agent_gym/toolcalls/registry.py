"""Every known format by name, in the order detection tries them: a shape that contains another
(Qwen3-Coder's XML inside `<tool_call>`) comes before the one it contains."""

from __future__ import annotations

from uni_agent_gym.errors import ConfigError
from uni_agent_gym.toolcalls.base import ToolCallFormat
from uni_agent_gym.toolcalls.json_formats import BareJson, DeepSeekV3, DeepSeekV31, Hermes, Llama3Json, MistralArgs, MistralList
from uni_agent_gym.toolcalls.lenient import Lenient
from uni_agent_gym.toolcalls.xml_formats import Glm45, HermesXml, XmlFunction

TEMPLATE_FORMATS: tuple[ToolCallFormat, ...] = (
    HermesXml(),
    Glm45(),
    Hermes(),
    MistralList(),
    MistralArgs(),
    DeepSeekV3(),
    DeepSeekV31(),
    Llama3Json(),
    XmlFunction(),
    BareJson(),
)
LENIENT = Lenient()
FORMATS: dict[str, ToolCallFormat] = {fmt.name: fmt for fmt in (LENIENT, *TEMPLATE_FORMATS)}


def get_format(name: str) -> ToolCallFormat:
    """The known format called `name`."""
    if name not in FORMATS:
        raise ConfigError(f"Unknown tool-call format {name!r}; known: {', '.join(FORMATS)} (or auto: the chat template's own)")
    return FORMATS[name]
