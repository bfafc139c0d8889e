"""Action parsing on real-looking model outputs, good and broken."""

from __future__ import annotations

import re

import pytest

from uni_agent_gym.envs.parsing import ToolCall, parse_action
from uni_agent_gym.toolcalls import get_format
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


# ----- in the conversation's tool-call format (see tests/test_toolcalls.py for the formats themselves) -----

IN_FORMAT = [
    ("llama3-json", '{"name": "execute_bash", "parameters": {"command": "ls"}}', ToolCall("execute_bash", {"command": "ls"})),
    ("hermes-xml",
     "<tool_call>\n<function=str_replace_editor>\n<parameter=command>\ninsert\n</parameter>\n<parameter=path>\n/a.py\n</parameter>\n"
     "<parameter=insert_line>\n3\n</parameter>\n<parameter=new_str>\n    x = 1\n</parameter>\n</function>\n</tool_call>",
     ToolCall("str_replace_editor", {"command": "insert", "path": "/a.py", "insert_line": 3, "new_str": "    x = 1"})),
    ("glm-4.5", "<tool_call>search\n<arg_key>search_term</arg_key>\n<arg_value>def mean</arg_value>\n</tool_call>",
     ToolCall("search", {"search_term": "def mean"})),
    ("mistral", '[TOOL_CALLS] [{"name": "finish", "arguments": {}, "id": "a1b2c3d4e"}]', ToolCall("finish", {})),
    ("deepseek-v3", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>finish\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     ToolCall("finish", {})),
]  # fmt: skip


@pytest.mark.parametrize("name, action, expected", IN_FORMAT, ids=[case[0] for case in IN_FORMAT])
def test_text_in_the_conversations_format(name, action, expected):
    assert parse_action(action, TOOLS, get_format(name)) == expected


def test_a_call_in_another_format_is_an_error_that_shows_the_conversations_format():
    """A Llama conversation: Hermes JSON is not read as a call, and the error shows Llama's own form."""
    with pytest.raises(ToolCallFormatError) as error:
        parse_action('<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls"}}\n</tool_call>', TOOLS, get_format("llama3-json"))
    assert str(error.value) == (
        'Llama tool calls put the arguments under "parameters", not "arguments". A well-formed call looks like:\n'
        '{"name": "execute_bash", "parameters": {"command": "ls"}}'
    )


@pytest.mark.parametrize("name", ["lenient", "hermes-xml", "mistral-args", "deepseek-v3.1"])
def test_no_call_found_shows_an_example_in_the_conversations_format(name):
    fmt = get_format(name)
    with pytest.raises(ToolCallFormatError) as error:
        parse_action("I think the bug is in utils.py.", TOOLS, fmt)
    example = fmt.write(ToolCall("execute_bash", {"command": "ls"}))
    assert str(error.value) == (
        f"No tool call found. Call exactly one tool per turn, e.g.\n{example}\n"
        "Available tools: execute_bash, str_replace_editor, search, finish"
    )
    assert parse_action(example, TOOLS, fmt) == ToolCall("execute_bash", {"command": "ls"})  # the example is a valid call


def test_two_calls_in_one_turn_are_refused_in_every_format():
    fmt = get_format("mistral-args")
    text = '[TOOL_CALLS]execute_bash[ARGS]{"command": "ls"}[TOOL_CALLS]finish[ARGS]{}'
    with pytest.raises(ToolCallFormatError, match=re.escape("Expects exactly one tool call per turn, got 2 (execute_bash, finish).")):
        parse_action(text, TOOLS, fmt)
