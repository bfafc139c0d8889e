"""Tool-call formats: real-looking outputs of each family, malformed ones, the format of a tokenizer taken
from its chat template (the shared tokenizers, and a template written in each known shape: see
chat_templates/README.md), and the round trip parse(template's rendering of a call) == call.

Nothing is faked: the templates render through transformers' `apply_chat_template` on real tokenizers."""

from __future__ import annotations

import random
import re
import typing
from functools import lru_cache
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from uni_agent_gym.config import ModelConfig
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.toolcalls import (
    FORMATS,
    LENIENT,
    PROBE,
    TEMPLATE_FORMATS,
    ToolCall,
    ToolCallFormatError,
    UnknownToolCallFormatError,
    call_text,
    detect_format,
    get_format,
    resolve_format,
)

TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "tokenizers"
TEMPLATES = Path(__file__).parent / "chat_templates"
FORMATS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "env.md"  # the docs page with the formats table

SHARED = {"qwen2.5-instruct": "hermes", "qwen3": "hermes", "llama-3.2-instruct": "llama3-json"}
WRITTEN = {  # tests/chat_templates/<name>.jinja -> the format it writes
    "hermes-3": "hermes",
    "qwen3-coder": "hermes-xml",
    "xml-function": "xml",
    "glm-4.5": "glm-4.5",
    "mistral-v0.3": "mistral",
    "mistral-small-3.2": "mistral-args",
    "deepseek-v3": "deepseek-v3",
    "deepseek-v3.1": "deepseek-v3.1",
    "bare-json": "json",
}
ALL_TEMPLATES = {**SHARED, **WRITTEN}


@lru_cache(maxsize=None)
def tokenizer_for(name: str):
    """A shared tokenizer, or the shared Qwen2.5 tokenizer carrying one of the written templates."""
    if name in SHARED:
        return AutoTokenizer.from_pretrained(TOKENIZERS / name)
    tokenizer = AutoTokenizer.from_pretrained(TOKENIZERS / "qwen2.5-instruct")
    tokenizer.chat_template = (TEMPLATES / f"{name}.jinja").read_text()
    return tokenizer


def tool(name: str, **properties: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}}}}


EDIT = tool("edit", text="string", count="integer", ratio="number", flag="boolean", items="array", data="object")
TOOLS = [EDIT, tool("finish"), tool("execute_bash", command="string")]

CALLS = [
    ("unicode", ToolCall("edit", {"text": "héllo wörld ✓ 日本語 🚀"})),
    ("quotes", ToolCall("edit", {"text": "say \"hi\" and 'bye', a \\\"backslashed\\\" quote"})),
    ("newlines-and-indentation", ToolCall("edit", {"text": "    return a - b\n\n\tdef f():\n        pass\n"})),
    ("nested-json", ToolCall("edit", {"data": {"a": [1, {"b": None, "c": "x\"y"}], "d": {"e": True}}, "items": [1, "two", [3]]})),
    ("empty-arguments", ToolCall("finish", {})),
    ("typed-scalars", ToolCall("edit", {"count": -3, "ratio": 0.25, "flag": False})),
    ("string-that-reads-as-json", ToolCall("edit", {"text": '{"a": 1}', "count": 0})),
    ("empty-string", ToolCall("edit", {"text": ""})),
    ("markup-in-a-string", ToolCall("edit", {"text": "<div>\n  <p>{x} & [y]</p>\n</div>"})),
    ("a-shell-command", ToolCall("execute_bash", {"command": "cd /testbed && grep -rn \"def mean\" . | head -n 5"})),
]


def random_calls(count: int, seed: int = 15) -> list[tuple[str, ToolCall]]:
    """Calls of `edit` with values drawn from hostile characters (quotes, backslashes, newlines, brackets,
    non-ASCII), each parameter of its declared type; seeded, so every run checks the same calls."""
    rng = random.Random(seed)
    alphabet = list("aZ09 _-.\n\t\"'\\<>/{}[]:,=`$&|") + ["é", "✓", "日", "🚀", "\u00a0"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))

    def value(kind: str):
        return {
            "text": text,
            "count": lambda: rng.randint(-10**6, 10**6),
            "ratio": lambda: rng.randint(-400, 400) / 8,
            "flag": lambda: rng.random() < 0.5,
            "items": lambda: [text(), rng.randint(0, 9), [text()]],
            "data": lambda: {text(): text(), "n": {"m": [rng.randint(0, 9), None]}},
        }[kind]()

    names = ["text", "count", "ratio", "flag", "items", "data"]
    return [
        (f"random-{i}", ToolCall("edit", {name: value(name) for name in rng.sample(names, rng.randint(1, len(names)))}))
        for i in range(count)
    ]


ROUND_TRIP_CALLS = CALLS + random_calls(12)


# ----- detection -----


@pytest.mark.parametrize("name, expected", list(ALL_TEMPLATES.items()), ids=list(ALL_TEMPLATES))
def test_the_format_is_the_one_the_template_writes(name, expected):
    assert detect_format(tokenizer_for(name)) is FORMATS[expected]


@pytest.mark.parametrize("name", list(ALL_TEMPLATES), ids=list(ALL_TEMPLATES))
@pytest.mark.parametrize("call", [call for _, call in ROUND_TRIP_CALLS], ids=[case for case, _ in ROUND_TRIP_CALLS])
def test_round_trip_parse_of_the_templates_rendering_is_the_call(name, call):
    """parse(render(assistant tool call)) == tool call, for every template shape and hostile values."""
    tokenizer = tokenizer_for(name)
    rendered = call_text(tokenizer, call)
    assert list(detect_format(tokenizer).parse(rendered, TOOLS).tool_calls) == [call], rendered


@pytest.mark.parametrize("name", [n for n, f in ALL_TEMPLATES.items() if not f.startswith("mistral")])
def test_the_formats_own_example_is_what_the_template_writes(name):
    """What the gym shows the model (prompt, format errors) is the template's own text for the call. (The
    Mistral templates add the call id they were given, which an example cannot know.)"""
    call = ToolCall("execute_bash", {"command": "ls -la"})
    assert detect_format(tokenizer_for(name)).write(call) in call_text(tokenizer_for(name), call)


@pytest.mark.parametrize("fmt", list(FORMATS.values()), ids=list(FORMATS))
@pytest.mark.parametrize("call", [call for _, call in CALLS], ids=[case for case, _ in CALLS])
def test_every_format_reads_back_what_it_writes(fmt, call):
    assert list(fmt.parse(fmt.write(call), TOOLS).tool_calls) == [call]


@pytest.mark.parametrize("name", ["deepseek-v3", "deepseek-v3.1"])
def test_deepseek_calls_are_read_as_a_metaspace_tokenizer_decodes_its_markers(tmp_path, name):
    """Markers that are vocabulary pieces of a Llama-style tokenizer decode with spaces for `▁` (`<｜tool sep｜>`):
    the sampled call, decoded as the gym decodes it, is still the call, and nothing of the markers is left as content."""
    from tests.metaspace_tokenizer import metaspace_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(metaspace_tokenizer(tmp_path, name))
    for _, call in CALLS:
        rendered = call_text(tokenizer, call)
        decoded = tokenizer.decode(tokenizer.encode(rendered, add_special_tokens=False), skip_special_tokens=False, clean_up_tokenization_spaces=False)
        assert "<｜tool sep｜>" in decoded and "<｜tool▁sep｜>" in rendered
        parsed = detect_format(tokenizer).parse(decoded, TOOLS)
        assert (parsed.content, list(parsed.tool_calls)) == ("", [call]), decoded


def test_detection_tries_a_shape_before_the_shapes_that_read_it_too():
    """Some texts read as a call in two formats (Qwen3-Coder's XML in <tool_call> reads as bare XML too);
    detection must reach the template's own format first, so it comes earlier in the order."""
    order = list(TEMPLATE_FORMATS)
    collisions = []  # (own, other): own's text reads as other's call
    for own in order:
        text = own.write(PROBE)
        for other in order:
            if other is own:
                continue
            try:
                calls = list(other.parse(text, {PROBE.name: {"properties": {"text": {"type": "string"}, "count": {"type": "integer"}}}}).tool_calls)
            except ToolCallFormatError:
                continue
            if calls == [PROBE]:
                collisions.append((own, other))
    # the collisions this guards against are there (else the order below would be checked on nothing)
    assert {("hermes-xml", "xml"), ("llama3-json", "json")} <= {(own.name, other.name) for own, other in collisions}
    for own, other in collisions:
        assert order.index(own) < order.index(other), f"{own.name}'s text reads as {other.name}"


def test_a_template_that_writes_no_tool_calls_has_no_format_and_the_gym_says_the_format():
    tokenizer = tokenizer_for("no-tool-calls")
    assert detect_format(tokenizer) is None
    assert resolve_format("auto", tokenizer) is LENIENT


def test_an_unknown_shape_is_reported_with_the_tokenizer_and_the_rendering():
    with pytest.raises(UnknownToolCallFormatError) as error:
        detect_format(tokenizer_for("unknown-shape"))
    message = str(error.value)
    assert str(TOKENIZERS / "qwen2.5-instruct") in message
    assert '<invoke name="uniagentgym_probe">{"text": "say \\"hé\\"\\n  ✓ done", "count": 7}</invoke>' in message
    assert "model.tool_format" in message and "response_schema" in message


def test_a_template_that_refuses_tool_calls_is_reported_with_its_reason():
    tokenizer = AutoTokenizer.from_pretrained(TOKENIZERS / "qwen2.5-instruct")
    tokenizer.chat_template = (
        "{% for m in messages %}{% if m.tool_calls %}{{ raise_exception('tool calls are not supported') }}{% endif %}"
        "{{ m.role + ': ' + m.content + '\\n' }}{% endfor %}"
    )
    with pytest.raises(UnknownToolCallFormatError, match="fails to render an assistant turn with a tool call: .*tool calls are not supported"):
        detect_format(tokenizer)


def test_a_tokenizer_without_a_chat_template_is_reported():
    tokenizer = AutoTokenizer.from_pretrained(TOKENIZERS / "qwen2.5-instruct")
    tokenizer.chat_template = None
    with pytest.raises(UnknownToolCallFormatError, match="has no chat template"):
        detect_format(tokenizer)


# ----- the tokenizer's own response_schema (transformers' parse_response) -----

INVOKE_SCHEMA = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "x-regex": r"^(.*?)(?=<invoke |\Z)"},
        "tool_calls": {
            "type": "array",
            "x-regex-iterator": r'(<invoke name="[^"]+">.*?</invoke>)',
            "items": {
                "type": "object",
                "x-regex": r'<invoke name="(?P<name>[^"]+)">(?P<arguments>.*?)</invoke>',
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object", "x-parser": "json"}},
            },
        },
    },
}


def schema_tokenizer(schema: dict):
    """The unknown `<invoke>` shape, with a response_schema that its makers could ship."""
    tokenizer = AutoTokenizer.from_pretrained(TOKENIZERS / "qwen2.5-instruct")
    tokenizer.chat_template = (TEMPLATES / "unknown-shape.jinja").read_text()
    tokenizer.response_schema = schema
    return tokenizer


def test_a_tokenizers_response_schema_is_used_where_it_has_one():
    """A shape the gym does not know parses with the tokenizer's own schema, round trip included."""
    tokenizer = schema_tokenizer(INVOKE_SCHEMA)
    fmt = detect_format(tokenizer)
    assert fmt.name == "response_schema"
    parsed = fmt.parse('Let me look.\n<invoke name="execute_bash">{"command": "ls -la"}</invoke>', TOOLS)
    assert parsed.content == "Let me look." and list(parsed.tool_calls) == [ToolCall("execute_bash", {"command": "ls -la"})]
    for _, call in ROUND_TRIP_CALLS:
        assert list(fmt.parse(call_text(tokenizer, call), TOOLS).tool_calls) == [call]
    assert fmt.write(ToolCall("finish", {})) == '<invoke name="finish">{}</invoke>'
    with pytest.raises(ToolCallFormatError, match=re.escape("does not fit the response schema of") + ".*Expecting property name"):
        fmt.parse('<invoke name="execute_bash">{command: ls}</invoke>', TOOLS)


def test_a_response_schema_that_misreads_its_own_template_is_reported():
    wrong = {**INVOKE_SCHEMA, "properties": {**INVOKE_SCHEMA["properties"]}}
    items = dict(wrong["properties"]["tool_calls"]["items"], **{"x-regex": r'<invoke name="(?P<name>[a-z]+)[^"]*">(?P<arguments>.*?)</invoke>'})
    wrong["properties"]["tool_calls"] = {**wrong["properties"]["tool_calls"], "items": items}
    with pytest.raises(UnknownToolCallFormatError, match="response_schema of .* does not read back") as error:
        detect_format(schema_tokenizer(wrong))
    assert "uniagentgym'" in str(error.value) and '<invoke name="uniagentgym_probe">' in str(error.value)


# ----- choosing the format of a run -----


def test_resolve_format_by_name_template_or_default():
    assert resolve_format("llama3-json") is FORMATS["llama3-json"]
    assert resolve_format("auto") is LENIENT
    assert resolve_format("auto", str(TOKENIZERS / "llama-3.2-instruct")) is FORMATS["llama3-json"]
    assert resolve_format("hermes", tokenizer_for("llama-3.2-instruct")) is FORMATS["hermes"]  # a named format is not overridden


def test_bad_format_names_and_tokenizer_paths_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match=re.escape("Unknown tool-call format 'hermes2'; known: lenient, hermes-xml,")):
        get_format("hermes2")
    with pytest.raises(ConfigError, match=re.escape(f"model.tokenizer: cannot load a tokenizer from {str(tmp_path / 'nothing')!r}")):
        resolve_format("auto", str(tmp_path / "nothing"))


def test_the_config_offers_exactly_the_known_formats():
    offered = typing.get_args(ModelConfig.model_fields["tool_format"].annotation)
    assert set(offered) == {"auto", *FORMATS}


def test_the_docs_table_names_every_format():
    section = FORMATS_PAGE.read_text().split("## Tool-call formats", 1)[1].split("\n#", 1)[0]
    assert {line.split("|")[1].strip(" `") for line in section.splitlines() if line.startswith("| `")} == set(FORMATS)


# ----- real-looking outputs, per format -----

GOOD = [
    ("hermes", "qwen2.5-text-then-call",
     "I'll look at the repository structure first.\n<tool_call>\n{\"name\": \"execute_bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>",
     "I'll look at the repository structure first.", [ToolCall("execute_bash", {"command": "ls"})]),
    ("hermes", "qwen3-think-then-call",
     "<think>\nThe bug is in the parser.\n</think>\n\n<tool_call>\n{\"name\": \"edit\", \"arguments\": {\"count\": 3}}\n</tool_call>",
     "<think>\nThe bug is in the parser.\n</think>", [ToolCall("edit", {"count": 3})]),
    ("hermes", "unclosed-at-the-end", '<tool_call>\n{"name": "finish", "arguments": {}}', "", [ToolCall("finish", {})]),
    ("hermes", "no-call", "The fix is done; nothing else to run.", "The fix is done; nothing else to run.", []),
    ("hermes-xml", "qwen3-coder",
     "I'll run the failing test.\n\n<tool_call>\n<function=execute_bash>\n<parameter=command>\npython -m pytest -x tests/test_a.py\n"
     "</parameter>\n</function>\n</tool_call>",
     "I'll run the failing test.", [ToolCall("execute_bash", {"command": "python -m pytest -x tests/test_a.py"})]),
    ("hermes-xml", "keeps-indentation-and-types",
     "<tool_call>\n<function=edit>\n<parameter=text>\n    return a + b\n</parameter>\n<parameter=count>\n4\n</parameter>\n"
     "<parameter=flag>\nTrue\n</parameter>\n<parameter=data>\n{'k': [1, 2]}\n</parameter>\n</function>\n</tool_call>",
     "", [ToolCall("edit", {"text": "    return a + b", "count": 4, "flag": True, "data": {"k": [1, 2]}})]),
    ("xml", "r2e-gym-inline",
     "Let me fix it.\n<function=edit>\n<parameter=text>x = 1</parameter>\n<parameter=count>2</parameter>\n</function>",
     "Let me fix it.", [ToolCall("edit", {"text": "x = 1", "count": 2})]),
    ("glm-4.5", "glm-think-then-call",
     "\n<think>I should list the files.</think>\n<tool_call>execute_bash\n<arg_key>command</arg_key>\n<arg_value>ls -la</arg_value>\n</tool_call>",
     "<think>I should list the files.</think>", [ToolCall("execute_bash", {"command": "ls -la"})]),
    ("glm-4.5", "glm-spaced-on-one-line",
     "Let me check: <tool_call>edit <arg_key>text</arg_key> <arg_value>backend</arg_value> <arg_key>count</arg_key> <arg_value>12</arg_value> </tool_call>",
     "Let me check:", [ToolCall("edit", {"text": "backend", "count": 12})]),
    ("llama3-json", "llama-bare", '{"name": "execute_bash", "parameters": {"command": "ls"}}', "", [ToolCall("execute_bash", {"command": "ls"})]),
    ("llama3-json", "llama-python-tag", '<|python_tag|>{"name": "finish", "parameters": {}}', "", [ToolCall("finish", {})]),
    ("llama3-json", "llama-after-a-sentence",
     'I will search.\n\n{"name": "edit", "parameters": {"items": [1, 2], "text": "a {b}"}}',
     "I will search.", [ToolCall("edit", {"items": [1, 2], "text": "a {b}"})]),
    ("json", "bare", '{"name": "finish", "arguments": {"message": "done"}}', "", [ToolCall("finish", {"message": "done"})]),
    ("json", "fenced", '```json\n{"name": "execute_bash", "arguments": {"command": "git diff"}}\n```', "",
     [ToolCall("execute_bash", {"command": "git diff"})]),
    ("json", "parameters-for-arguments", '{"name": "execute_bash", "parameters": {"command": "ls"}}', "", [ToolCall("execute_bash", {"command": "ls"})]),
    ("mistral", "v0.3-list", '[TOOL_CALLS] [{"name": "execute_bash", "arguments": {"command": "ls"}, "id": "Ab3dE5gH1"}]', "",
     [ToolCall("execute_bash", {"command": "ls"})]),
    ("mistral", "nemo-no-space-string-arguments", '[TOOL_CALLS][{"name": "execute_bash", "arguments": "{\\"command\\": \\"ls\\"}"}]', "",
     [ToolCall("execute_bash", {"command": "ls"})]),
    ("mistral-args", "small-3.2", 'Listing.[TOOL_CALLS]execute_bash[ARGS]{"command": "ls"}', "Listing.", [ToolCall("execute_bash", {"command": "ls"})]),
    ("mistral-args", "with-call-id", '[TOOL_CALLS]finish[CALL_ID]a1b2c3d4e[ARGS]{}', "", [ToolCall("finish", {})]),
    ("deepseek-v3", "v3",
     "Running it.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>execute_bash\n```json\n{\"command\": \"ls\"}\n```"
     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "Running it.", [ToolCall("execute_bash", {"command": "ls"})]),
    ("deepseek-v3.1", "v3.1",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>execute_bash<｜tool▁sep｜>{\"command\": \"ls\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "", [ToolCall("execute_bash", {"command": "ls"})]),
]  # fmt: skip


@pytest.mark.parametrize("name, text, content, calls", [case[:1] + case[2:] for case in GOOD], ids=[f"{c[0]}:{c[1]}" for c in GOOD])
def test_real_looking_outputs(name, text, content, calls):
    parsed = FORMATS[name].parse(text, TOOLS)
    assert list(parsed.tool_calls) == calls and parsed.content == content


BAD = [
    ("hermes", '<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls"}\n</tool_call>', "Invalid JSON in <tool_call>: Expecting ',' delimiter"),
    ("hermes", "<tool_call>\n<function=execute_bash>\n</function>\n</tool_call>", "Invalid JSON in <tool_call>: Expecting value"),
    ("hermes-xml", '<tool_call>\n{"name": "finish", "arguments": {}}\n</tool_call>',
     "A <tool_call> must hold one <function=NAME>...</function> block, got 0"),
    ("glm-4.5", '<tool_call>{"name": "finish", "arguments": {}}</tool_call>', "Expects <tool_call>NAME, then each argument as <arg_key>KEY</arg_key>"),
    ("llama3-json", '<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls"}}\n</tool_call>',
     'Llama tool calls put the arguments under "parameters", not "arguments"'),
    ("llama3-json", '<|python_tag|>brave_search.call(query="x")', "Invalid JSON in the tool call: Expecting value"),
    ("llama3-json", '{"name": "execute_bash", "parameters": {"command": "ls"}', "Invalid JSON in the tool call: Expecting ',' delimiter"),
    ("mistral", '[TOOL_CALLS] [{"name": "execute_bash", "arguments": {"command": "ls"}', "Invalid JSON in [TOOL_CALLS]: Expecting ',' delimiter"),
    ("mistral-args", '[TOOL_CALLS] [{"name": "finish", "arguments": {}}]', "Expects [TOOL_CALLS]name[ARGS]{...}"),
    ("mistral-args", "[TOOL_CALLS]execute_bash[ARGS]{'command': 'ls'}", "Invalid JSON in the arguments of execute_bash: Expecting property name"),
    ("deepseek-v3", "<｜tool▁call▁begin｜>execute_bash<｜tool▁sep｜>{\"command\": \"ls\"}<｜tool▁call▁end｜>",
     "Expects <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME, a newline, then the arguments in a ```json fence"),
    ("deepseek-v3.1", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>execute_bash\n```json\n{}\n```<｜tool▁call▁end｜>",
     "Expects <｜tool▁call▁begin｜>NAME<｜tool▁sep｜> then the arguments as a JSON object"),
    ("json", "[1, 2]", "A JSON tool call must be an object with 'name' and 'arguments'"),
    ("json", '{"arguments": {}}', "A tool call needs a string 'name', got keys ['arguments']"),
]  # fmt: skip


@pytest.mark.parametrize("name, text, message", BAD, ids=[f"{case[0]}:{i}" for i, case in enumerate(BAD)])
def test_malformed_calls_say_what_is_wrong(name, text, message):
    with pytest.raises(ToolCallFormatError, match=re.escape(message)):
        FORMATS[name].parse(text, TOOLS)


def test_a_call_in_another_familys_shape_is_not_read_as_one():
    """The template's format is the rule: Hermes JSON is no call for Mistral, DeepSeek or GLM's parser
    (and an error where it looks like one), never a silently different call."""
    hermes = FORMATS["hermes"].write(ToolCall("execute_bash", {"command": "ls"}))
    for name in ("mistral", "mistral-args", "deepseek-v3", "deepseek-v3.1", "xml"):
        assert FORMATS[name].parse(hermes, TOOLS).tool_calls == ()
    for name in ("hermes-xml", "glm-4.5", "llama3-json"):
        with pytest.raises(ToolCallFormatError):
            FORMATS[name].parse(hermes, TOOLS)
