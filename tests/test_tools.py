"""The four tools, table-driven: every editor command and error path, search, bash, finish.

Each case runs on a local deployment whose workdir is a fresh directory; the same table then runs on
docker at the same path and must give the same observations.
"""

from __future__ import annotations

import secrets

import pytest

from uni_agent_gym.deployments import make_deployment
from uni_agent_gym.tools import ToolCallFormatError, make_tools
from uni_agent_gym.tools.bash import NO_OUTPUT
from uni_agent_gym.tools.editor import REVIEW, REVIEW_INSERT, TRUNCATED_MESSAGE

SAMPLE = "def f():\n\treturn 1\n\nx = 1\nx = 1\ny = 2\n"
SNIPPET = "Here's the result of running `cat -n` on"


def cat_n(lines: list[str], first: int = 1) -> str:
    return "\n".join(f"{number:6}\t{line}" for number, line in enumerate(lines, first)) + "\n"


# (id, [(tool, arguments), ...] run before, (tool, arguments), expected observation, expected s.py or None, error)
# `{W}` stands for the workdir. `error` is whether the observation is a refusal.
EDITOR_CASES = [
    ("view-file", [], {"command": "view", "path": "{W}/s.py"},
     f"{SNIPPET} {{W}}/s.py:\n" + cat_n(SAMPLE.split("\n")), None, False),
    ("view-range", [], {"command": "view", "path": "{W}/s.py", "view_range": [2, 3]},
     f"{SNIPPET} {{W}}/s.py:\n" + cat_n(["\treturn 1", ""], 2), None, False),
    ("view-range-to-end", [], {"command": "view", "path": "{W}/s.py", "view_range": [6, -1]},
     f"{SNIPPET} {{W}}/s.py:\n" + cat_n(["y = 2", ""], 6), None, False),
    ("view-range-first-out-of-file", [], {"command": "view", "path": "{W}/s.py", "view_range": [0, 2]},
     "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 7]", None, True),
    ("view-range-second-too-large", [], {"command": "view", "path": "{W}/s.py", "view_range": [2, 9]},
     "Invalid `view_range`: [2, 9]. Its second element `9` should be smaller than the number of lines in the file: `7`", None, True),
    ("view-range-reversed", [], {"command": "view", "path": "{W}/s.py", "view_range": [4, 2]},
     "Invalid `view_range`: [4, 2]. Its second element `2` should be larger or equal than its first `4`", None, True),
    ("view-range-not-two", [], {"command": "view", "path": "{W}/s.py", "view_range": [1]},
     "Invalid `view_range`. It should be a list of two integers.", None, True),
    ("view-directory", [], {"command": "view", "path": "{W}"},
     "Here's the files and directories up to 2 levels deep in {W}, excluding hidden items:\n{W}\n{W}/s.py\n{W}/sub\n{W}/sub/t.txt\n\n",
     None, False),
    ("view-directory-with-range", [], {"command": "view", "path": "{W}", "view_range": [1, 2]},
     "The `view_range` parameter is not allowed when `path` points to a directory.", None, True),
    ("create", [], {"command": "create", "path": "{W}/new dir/n.py", "file_text": "a\tb\n"},
     "File created successfully at: {W}/new dir/n.py", None, False),
    ("create-existing", [], {"command": "create", "path": "{W}/s.py", "file_text": "x"},
     "File already exists at: {W}/s.py. Cannot overwrite files using command `create`.", None, True),
    ("create-without-text", [], {"command": "create", "path": "{W}/n.py"},
     "Parameter `file_text` is required for command: create", None, True),
    ("str-replace", [], {"command": "str_replace", "path": "{W}/s.py", "old_str": "\treturn 1", "new_str": "\treturn 2"},
     f"The file {{W}}/s.py has been edited. {SNIPPET} a snippet of {{W}}/s.py:\n"
     + cat_n(["def f():", "\treturn 2", "", "x = 1", "x = 1", "y = 2"]) + REVIEW,
     SAMPLE.replace("\treturn 1", "\treturn 2"), False),
    ("str-replace-delete", [], {"command": "str_replace", "path": "{W}/s.py", "old_str": "y = 2\n"},
     f"The file {{W}}/s.py has been edited. {SNIPPET} a snippet of {{W}}/s.py:\n"
     + cat_n(["\treturn 1", "", "x = 1", "x = 1", ""], 2) + REVIEW,
     SAMPLE.replace("y = 2\n", ""), False),
    ("str-replace-absent", [], {"command": "str_replace", "path": "{W}/s.py", "old_str": "return 3", "new_str": "x"},
     "No replacement was performed, old_str `return 3` did not appear verbatim in {W}/s.py.", SAMPLE, True),
    ("str-replace-tab-vs-spaces", [], {"command": "str_replace", "path": "{W}/s.py", "old_str": "    return 1", "new_str": "x"},
     "No replacement was performed, old_str `    return 1` did not appear verbatim in {W}/s.py.", SAMPLE, True),
    ("str-replace-multiple", [], {"command": "str_replace", "path": "{W}/s.py", "old_str": "x = 1", "new_str": "x = 3"},
     "No replacement was performed. Multiple occurrences of old_str `x = 1` in lines [4, 5]. Please ensure it is unique",
     SAMPLE, True),
    ("str-replace-same", [], {"command": "str_replace", "path": "{W}/s.py", "old_str": "y = 2", "new_str": "y = 2"},
     "No replacement was performed, `new_str` is the same as `old_str` in {W}/s.py.", SAMPLE, True),
    ("str-replace-without-old", [], {"command": "str_replace", "path": "{W}/s.py", "new_str": "x"},
     "Parameter `old_str` is required for command: str_replace", SAMPLE, True),
    ("insert-top", [], {"command": "insert", "path": "{W}/s.py", "insert_line": 0, "new_str": "import os"},
     f"The file {{W}}/s.py has been edited. {SNIPPET} a snippet of the edited file:\n"
     + cat_n(["import os", "def f():", "\treturn 1", "", "x = 1"]) + REVIEW_INSERT,
     "import os\n" + SAMPLE, False),
    ("insert-end", [], {"command": "insert", "path": "{W}/s.py", "insert_line": 7, "new_str": "z = 3"},
     f"The file {{W}}/s.py has been edited. {SNIPPET} a snippet of the edited file:\n"
     + cat_n(["x = 1", "x = 1", "y = 2", "", "z = 3"], 4) + REVIEW_INSERT,
     SAMPLE + "\nz = 3", False),  # line 7 is the empty line after the last newline, as in SWE-agent
    ("insert-out-of-range", [], {"command": "insert", "path": "{W}/s.py", "insert_line": 8, "new_str": "z"},
     "Invalid `insert_line` parameter: 8. It should be within the range of lines of the file: [0, 7]", SAMPLE, True),
    ("insert-negative", [], {"command": "insert", "path": "{W}/s.py", "insert_line": -1, "new_str": "z"},
     "Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 7]", SAMPLE, True),
    ("insert-without-line", [], {"command": "insert", "path": "{W}/s.py", "new_str": "z"},
     "Parameter `insert_line` is required for command: insert", SAMPLE, True),
    ("insert-without-text", [], {"command": "insert", "path": "{W}/s.py", "insert_line": 1},
     "Parameter `new_str` is required for command: insert", SAMPLE, True),
    ("undo-after-replace", [{"command": "str_replace", "path": "{W}/s.py", "old_str": "y = 2", "new_str": "y = 5"}],
     {"command": "undo_edit", "path": "{W}/s.py"},
     "Last edit to {W}/s.py undone successfully. " + f"{SNIPPET} {{W}}/s.py:\n" + cat_n(SAMPLE.split("\n")), SAMPLE, False),
    ("undo-twice", [{"command": "insert", "path": "{W}/s.py", "insert_line": 0, "new_str": "a"},
                    {"command": "insert", "path": "{W}/s.py", "insert_line": 0, "new_str": "b"},
                    {"command": "undo_edit", "path": "{W}/s.py"}],
     {"command": "undo_edit", "path": "{W}/s.py"},
     "Last edit to {W}/s.py undone successfully. " + f"{SNIPPET} {{W}}/s.py:\n" + cat_n(SAMPLE.split("\n")), SAMPLE, False),
    ("undo-without-history", [], {"command": "undo_edit", "path": "{W}/s.py"},
     "No edit history found for {W}/s.py.", SAMPLE, True),
    ("undo-create-removes", [{"command": "create", "path": "{W}/n.py", "file_text": "x"}],
     {"command": "undo_edit", "path": "{W}/n.py"},
     "Last edit to {W}/n.py undone successfully: the file created by `create` was removed.", None, False),
    ("relative-path", [], {"command": "view", "path": "s.py"},
     "The path s.py is not an absolute path, it should start with `/`. Maybe you meant {W}/s.py?", None, True),
    ("missing-path", [], {"command": "view", "path": "{W}/nope.py"},
     "The path {W}/nope.py does not exist. Please provide a valid path.", None, True),
    ("edit-a-directory", [], {"command": "str_replace", "path": "{W}/sub", "old_str": "a", "new_str": "b"},
     "The path {W}/sub is a directory and only the `view` command can be used on directories", None, True),
    ("unknown-command", [], {"command": "delete", "path": "{W}/s.py"},
     'Unrecognized command delete. The allowed commands for the str_replace_editor tool are: "view", "create", '
     '"str_replace", "insert", "undo_edit"', SAMPLE, True),
    ("not-utf8", [], {"command": "view", "path": "{W}/sub/bin.dat"},
     "The file {W}/sub/bin.dat is not UTF-8 text; inspect or change it with execute_bash.", None, True),
]  # fmt: skip


async def seed(deployment, workdir: str) -> None:
    await deployment.write_file(f"{workdir}/s.py", SAMPLE)
    await deployment.write_file(f"{workdir}/sub/t.txt", "needle here\nand a needle there\n")
    await deployment.write_file(f"{workdir}/.hidden/h.txt", "needle\n")


async def run_case(deployment, workdir: str, before: list, arguments: dict):
    editor = make_tools(["str_replace_editor"])["str_replace_editor"]
    fill = lambda value: value.replace("{W}", workdir) if isinstance(value, str) else value  # noqa: E731
    for earlier in before:
        await editor.call(deployment, {k: fill(v) for k, v in earlier.items()})
    if "bin.dat" in arguments["path"]:
        await deployment.write_file(f"{workdir}/sub/bin.dat", b"\xff\xfe\x00bin")
    return await editor.call(deployment, editor.check_arguments({k: fill(v) for k, v in arguments.items()}))


@pytest.fixture
async def local_workspace():
    workdir = f"/tmp/uag-tools-{secrets.token_hex(4)}"
    deployment = make_deployment({"type": "local", "workdir": workdir})
    await deployment.start()
    await seed(deployment, workdir)
    yield deployment, workdir
    await deployment.run(f"rm -rf {workdir}")
    await deployment.stop()


@pytest.mark.parametrize("case", EDITOR_CASES, ids=[case[0] for case in EDITOR_CASES])
async def test_editor(local_workspace, case):
    deployment, workdir = local_workspace
    _, before, arguments, expected, content_after, error = case
    result = await run_case(deployment, workdir, before, arguments)
    assert result.output == expected.replace("{W}", workdir)
    assert result.error is error
    if content_after is not None:
        assert (await deployment.read_file(f"{workdir}/s.py")).decode() == content_after


async def test_created_file_keeps_tabs_and_undo_removes_it(local_workspace):
    deployment, workdir = local_workspace
    await run_case(deployment, workdir, [], {"command": "create", "path": f"{workdir}/n.py", "file_text": "a\tb\n"})
    assert await deployment.read_file(f"{workdir}/n.py") == b"a\tb\n"
    await run_case(deployment, workdir, [{"command": "create", "path": f"{workdir}/m.py", "file_text": "x"}],
                   {"command": "undo_edit", "path": f"{workdir}/m.py"})  # fmt: skip
    assert (await deployment.run(f"test -e {workdir}/m.py")).exit_code == 1


async def test_long_files_are_clipped_with_a_note(local_workspace):
    deployment, workdir = local_workspace
    await deployment.write_file(f"{workdir}/long.txt", "".join(f"line {i}\n" for i in range(5000)))
    result = await run_case(deployment, workdir, [], {"command": "view", "path": f"{workdir}/long.txt"})
    assert result.output.endswith(TRUNCATED_MESSAGE + "\n") and len(result.output) < 16000 + len(TRUNCATED_MESSAGE) + 200


SEARCH_CASES = [
    ("directory", {"search_term": "needle"},
     'Found 3 matches for "needle" in {W}:\n./s.py (1 matches)\n./sub/t.txt (2 matches)\nEnd of matches for "needle" in {W}'),
    ("file", {"search_term": "needle", "path": "{W}/sub/t.txt"},
     'Matches for "needle" in {W}/sub/t.txt:\n1:needle here\n2:and a needle there\nEnd of matches for "needle" in {W}/sub/t.txt'),
    ("no-match", {"search_term": "haystack", "path": "{W}/sub"}, 'No matches found for "haystack" in {W}/sub'),
    ("missing", {"search_term": "x", "path": "{W}/nope"}, "The path {W}/nope does not exist. Please provide a valid path."),
    ("literal-not-regex", {"search_term": "needle.*", "path": "{W}"}, 'No matches found for "needle.*" in {W}'),
]  # fmt: skip


@pytest.mark.parametrize("case", SEARCH_CASES, ids=[case[0] for case in SEARCH_CASES])
async def test_search(local_workspace, case):
    deployment, workdir = local_workspace
    await deployment.write_file(f"{workdir}/s.py", "needle = 1\n")
    _, arguments, expected = case
    search = make_tools(["search"])["search"]
    result = await search.call(deployment, {k: v.replace("{W}", workdir) for k, v in arguments.items()})
    assert result.output == expected.replace("{W}", workdir)


async def test_search_caps_matches(local_workspace):
    deployment, workdir = local_workspace
    await deployment.run(f"mkdir -p {workdir}/many && for i in $(seq 1 120); do echo hit > {workdir}/many/f$i; done")
    await deployment.write_file(f"{workdir}/lines.txt", "hit\n" * 150)
    search = make_tools(["search"])["search"]
    many = await search.call(deployment, {"search_term": "hit", "path": f"{workdir}/many"})
    assert many.output == f'More than 100 files matched for "hit" in {workdir}/many. Please narrow your search.'
    lines = await search.call(deployment, {"search_term": "hit", "path": f"{workdir}/lines.txt"})
    assert lines.output.startswith(f'More than 100 lines matched "hit" in {workdir}/lines.txt; the first 100:\n1:hit\n')
    assert lines.output.endswith("100:hit\nNarrow your search.")


@pytest.mark.parametrize(
    "command, expected, exit_code",
    [
        ("true", NO_OUTPUT, 0),
        ("echo hi", "hi\n", 0),
        ("echo oops >&2; exit_with() { return $1; }; exit_with 4", "oops\n[exit code: 4]", 4),
        ("false", "\n[exit code: 1]", 1),
    ],
    ids=["silent", "output", "failure", "silent-failure"],
)
async def test_execute_bash(local_workspace, command, expected, exit_code):
    deployment, _ = local_workspace
    result = await make_tools(["execute_bash"])["execute_bash"].call(deployment, {"command": command})
    assert (result.output, result.exit_code) == (expected, exit_code)


async def test_execute_bash_timeout_and_finish(local_workspace):
    deployment, _ = local_workspace
    tools = make_tools(bash_timeout=1)
    result = await tools["execute_bash"].call(deployment, {"command": "echo start; sleep 30"})
    assert result.output.startswith("start\n") and "[The command timed out after 1 s and was interrupted.]" in result.output
    done = await tools["finish"].call(deployment, {})
    assert done.terminal and not done.error


@pytest.mark.parametrize(
    "tool, arguments, message",
    [
        ("execute_bash", {}, "Missing required argument 'command' for execute_bash"),
        ("execute_bash", {"command": 3}, "Argument 'command' of execute_bash must be of type string, got int"),
        ("execute_bash", {"command": "ls", "cwd": "/"}, "Unknown argument(s) for execute_bash: cwd. Valid arguments: command"),
        ("str_replace_editor", {"command": "view"}, "Missing required argument 'path' for str_replace_editor"),
        ("str_replace_editor", {"command": "insert", "path": "/a", "insert_line": "3"},
         "Argument 'insert_line' of str_replace_editor must be of type integer, got str"),
        ("str_replace_editor", {"command": "insert", "path": "/a", "insert_line": True},
         "Argument 'insert_line' of str_replace_editor must be of type integer, got bool"),
        ("search", ["needle"], "Arguments of search must be a JSON object, got list"),
    ],  # fmt: skip
)
def test_argument_checks(tool, arguments, message):
    with pytest.raises(ToolCallFormatError) as caught:
        make_tools([tool])[tool].check_arguments(arguments)
    assert str(caught.value) == message


def test_schemas_are_openai_functions():
    tools = make_tools()
    assert sorted(tools) == ["execute_bash", "finish", "search", "str_replace_editor"]
    for name, tool in tools.items():
        schema = tool.schema()
        assert schema["type"] == "function" and schema["function"]["name"] == name
        assert schema["function"]["parameters"]["type"] == "object"
        assert set(schema["function"]["parameters"]["required"]) <= set(schema["function"]["parameters"]["properties"])


async def test_docker_gives_the_same_observations(local_workspace, deployment_factory):
    """Every editor case, search and bash call, on docker at the same path, reads exactly as on local."""
    local, workdir = local_workspace
    docker = deployment_factory("docker", workdir=workdir)
    await docker.start()
    for deployment in (local, docker):
        await seed(deployment, workdir)
    for case in EDITOR_CASES:
        _, before, arguments, *_ = case
        observations = []
        for deployment in (local, docker):
            await seed(deployment, workdir)
            await deployment.run(f"rm -rf '{workdir}/new dir' {workdir}/n.py")
            observations.append((await run_case(deployment, workdir, before, arguments)).output)
        assert observations[0] == observations[1], case[0]
    for arguments in [{"search_term": "needle"}, {"search_term": "needle", "path": f"{workdir}/sub/t.txt"}]:
        outputs = [(await make_tools(["search"])["search"].call(d, arguments)).output for d in (local, docker)]
        assert outputs[0] == outputs[1]
