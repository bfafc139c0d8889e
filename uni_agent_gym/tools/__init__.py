"""The agent's tools: `execute_bash`, `str_replace_editor`, `search`, `finish`.

Each is host-side Python over the deployment primitives, so it behaves the same on every deployment
and needs nothing installed in the sandbox. `make_tools()` gives a fresh set per episode (the editor
keeps an undo history).
"""

from __future__ import annotations

from uni_agent_gym.errors import ConfigError
from uni_agent_gym.tools.base import Tool, ToolCallFormatError, ToolError, ToolResult
from uni_agent_gym.tools.bash import ExecuteBash
from uni_agent_gym.tools.editor import StrReplaceEditor
from uni_agent_gym.tools.finish import Finish
from uni_agent_gym.tools.search import Search

__all__ = ["Tool", "ToolCallFormatError", "ToolError", "ToolResult", "TOOL_NAMES", "make_tools"]

TOOL_NAMES = ("execute_bash", "str_replace_editor", "search", "finish")


def make_tools(names: tuple[str, ...] | list[str] = TOOL_NAMES, *, bash_timeout: float | None = None) -> dict[str, Tool]:
    """Fresh tool instances by name, in the given order."""
    factories = {
        "execute_bash": lambda: ExecuteBash(timeout=bash_timeout),
        "str_replace_editor": StrReplaceEditor,
        "search": Search,
        "finish": Finish,
    }
    unknown = [name for name in names if name not in factories]
    if unknown:
        raise ConfigError(f"Unknown tool(s) {', '.join(unknown)}; available: {', '.join(factories)}")
    return {name: factories[name]() for name in names}
