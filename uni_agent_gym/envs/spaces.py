"""Observation and action spaces: free text (any Unicode), and for actions a tool-call dict too.

Gymnasium's `Text` space only holds characters of a fixed charset (alphanumerics by default), while
observations are program output and actions are model text. These spaces keep `Text`'s sampling
(for `check_env`) but contain any string up to the length limit.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

MAX_TEXT = 1 << 20


class AnyText(spaces.Text):
    """Any `str` of at most `max_length` characters."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


class ToolCallOrText(AnyText):
    """Model text, or a `{"name": str, "arguments": dict | str}` tool call."""

    def contains(self, x: Any) -> bool:
        if isinstance(x, dict):
            return isinstance(x.get("name"), str) and isinstance(x.get("arguments", {}), (dict, str))
        return super().contains(x)


OBSERVATION_SPACE = AnyText(max_length=MAX_TEXT, min_length=0)
ACTION_SPACE = ToolCallOrText(max_length=MAX_TEXT, min_length=0)
