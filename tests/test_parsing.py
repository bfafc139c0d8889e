"""Action parsing on real-looking model outputs, good and broken."""

from __future__ import annotations

import re

import pytest

from uni_agent_gym.envs.parsing import ToolCall, parse_action
from uni_agent_gym.tools import ToolCallFormatError, make_tools

TOOLS = make_tools()

GOOD = [
    ("dict", {"name": "execute_bash", "arguments": {"command": "ls -la"}}, ToolCall("execute_bash", {"command": "ls -la"})),
    ("dict-json-string-arguments", {"name": "execute_bash", "arguments": '{"command": "pwd"}'}, ToolCall("execute_bash", {"command": "pwd"})),
    ("openai-function-wrapper",
     {"type": "function", "function": {"name": "search", "arguments": '{"search_term": "def foo", "path": "/testbed"}'}},
     ToolCall("search", {"search_term": "def foo", "path": "/testbed"})),
    ("qwen-hermes",
     "I'll look at the repository structure first.\n<tool_call>\n{\"name\": \"str_replace_editor\", \"arguments\": "
     "{\"command\": \"view\", \"path\": \"/testbed\"}}\n</tool_call>",
     ToolCall("str_replace_editor", {"command": "view", "path": "/testbed"})),
    ("qwen3-think-then-call",
     "<think>\nThe bug is in the parser. Let me open it.\n</think>\n\n<tool_call>\n{\"name\": \"str_replace_editor\", "
     "\"arguments\": {\"command\": \"view\", \"path\": \"/testbed/src/parser.py\", \"view_range\": [10, 40]}}\n</tool_call>",
     ToolCall("str_replace_editor", {"command": "view", "path": "/testbed/src/parser.py", "view_range": [10, 40]})),
    ("hermes-unclosed-at-end",
     '<tool_call>\n{"name": "finish", "arguments": {}}',
     ToolCall("finish", {})),
    ("r2e-xml",
     "Let me fix the off-by-one.\n<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n"
     "<parameter=path>/testbed/calc.py</parameter>\n<parameter=old_str>\n    return a - b\n</parameter>\n"
     "<parameter=new_str>\n    return a + b\n</parameter>\n</function>",
     ToolCall("str_replace_editor", {"command": "str_replace", "path": "/testbed/calc.py",
                                     "old_str": "    return a - b", "new_str": "    return a + b"})),
    ("r2e-xml-typed-parameters",
     "<function=str_replace_editor>\n<parameter=command>insert</parameter>\n<parameter=path>/a.py</parameter>\n"
     "<parameter=insert_line>3</parameter>\n<parameter=new_str>x = 1</parameter>\n</function>",
     ToolCall("str_replace_editor", {"command": "insert", "path": "/a.py", "insert_line": 3, "new_str": "x = 1"})),
    ("r2e-xml-multiline-command",
     "<function=execute_bash>\n<parameter=command>\ncd /testbed\npython -m pytest -x tests/test_a.py\n</parameter>\n</function>",
     ToolCall("execute_bash", {"command": "cd /testbed\npython -m pytest -x tests/test_a.py"})),
    ("bare-json", '{"name": "finish", "arguments": {"message": "done"}}', ToolCall("finish", {"message": "done"})),
    ("fenced-json", '```json\n{"name": "execute_bash", "arguments": {"command": "git diff"}}\n```',
     ToolCall("execute_bash", {"command": "git diff"})),
    ("tool-calls-list", '{"tool_calls": [{"type": "function", "function": {"name": "finish", "arguments": "{}"}}]}',
     ToolCall("finish", {})),
]  # fmt: skip


@pytest.mark.parametrize("action, expected", [case[1:] for case in GOOD], ids=[case[0] for case in GOOD])
def test_good_actions(action, expected):
    assert parse_action(action, TOOLS) == expected


BAD = [
    ("broken-json-in-tool-call",
     '<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls"}\n</tool_call>',
     "Invalid JSON in <tool_call>: Expecting ',' delimiter"),
    ("broken-json-arguments-string", {"name": "execute_bash", "arguments": '{"command": "ls'},
     "The arguments of execute_bash are not valid JSON: Unterminated string"),
    ("two-tool-calls",
     '<tool_call>{"name": "execute_bash", "arguments": {"command": "ls"}}</tool_call>\n'
     '<tool_call>{"name": "finish", "arguments": {}}</tool_call>',
     "Expects exactly one tool call per turn, got 2 (execute_bash, finish)."),
    ("two-xml-calls",
     "<function=finish></function><function=finish></function>",
     "Expects exactly one tool call per turn, got 2 (finish, finish)."),
    ("no-tool-call", "I think the bug is in utils.py; I should look at it next.",
     "No tool call found. Call exactly one tool per turn"),
    ("empty-text", "", "No tool call found."),
    ("unknown-tool", '<tool_call>{"name": "browse_web", "arguments": {"url": "x"}}</tool_call>',
     "Unknown tool 'browse_web'. Available tools: execute_bash, str_replace_editor, search, finish"),
    ("missing-required-argument", '<tool_call>{"name": "execute_bash", "arguments": {}}</tool_call>',
     "Missing required argument 'command' for execute_bash"),
    ("xml-missing-required", "<function=str_replace_editor>\n<parameter=command>view</parameter>\n</function>",
     "Missing required argument 'path' for str_replace_editor"),
    ("xml-bad-integer",
     "<function=str_replace_editor><parameter=command>insert</parameter><parameter=path>/a</parameter>"
     "<parameter=insert_line>three</parameter></function>",
     "Argument 'insert_line' of str_replace_editor must be of type integer, got str"),
    ("no-name", {"arguments": {"command": "ls"}}, "A tool call needs a string 'name', got keys ['arguments']"),
    ("tool-call-not-object", "<tool_call>[1, 2]</tool_call>", "A <tool_call> must hold a JSON object, got list"),
    ("not-text-or-dict", 42, "Expects a tool call as a dict or model text, got int"),
]  # fmt: skip


@pytest.mark.parametrize("action, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_actions_say_what_is_wrong(action, message):
    with pytest.raises(ToolCallFormatError, match=re.escape(message)):
        parse_action(action, TOOLS)
