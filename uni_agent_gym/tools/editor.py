"""`str_replace_editor`: view, create and edit files, with SWE-agent's semantics and wording.

It follows SWE-agent's `str_replace_editor` (tools/edit_anthropic) so models trained on that tool
feel at home, with two deliberate differences: tabs are preserved (SWE-agent `expandtabs()` the
file, which rewrites every tab of an edited file), and `undo_edit` after `create` removes the file.
Directory listings are sorted so every deployment shows the same text. Files move through the
deployment's `read_file` / `write_file`, so the sandbox needs nothing installed.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from pathlib import PurePosixPath
from typing import Any

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.errors import SandboxFileNotFoundError
from uni_agent_gym.tools.base import Tool, ToolError, ToolResult

SNIPPET_LINES = 4
MAX_RESPONSE_LEN = 16000
TRUNCATED_MESSAGE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should "
    "retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers "
    "of what you are looking for.</NOTE>"
)
COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")
REVIEW = "Review the changes and make sure they are as expected. Edit the file again if necessary."
REVIEW_INSERT = (
    "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). "
    "Edit the file again if necessary."
)


def clip(text: str) -> str:
    """Shorten long tool output, saying so and how to find the rest."""
    return text if len(text) <= MAX_RESPONSE_LEN else text[:MAX_RESPONSE_LEN] + TRUNCATED_MESSAGE


def numbered(content: str, descriptor: str, first_line: int = 1) -> str:
    """`cat -n` style text, as SWE-agent shows files (clipped after numbering, so the reply stays short)."""
    body = "\n".join(f"{number:6}\t{line}" for number, line in enumerate(content.split("\n"), first_line))
    return f"Here's the result of running `cat -n` on {descriptor}:\n{clip(body)}\n"


class StrReplaceEditor(Tool):
    name = "str_replace_editor"
    description = (
        "Custom editing tool for viewing, creating and editing files.\n"
        "* State is persistent across command calls and discussions with the user\n"
        "* If `path` is a file, `view` displays the result of applying `cat -n`. If `path` is a directory, "
        "`view` lists non-hidden files and directories up to 2 levels deep\n"
        "* The `create` command cannot be used if the specified `path` already exists as a file\n"
        "* If a `command` generates a long output, it will be truncated and marked with `<response clipped>`\n"
        "* The `undo_edit` command will revert the last edit made to the file at `path`\n\n"
        "Notes for using the `str_replace` command:\n"
        "* The `old_str` parameter should match EXACTLY one or more consecutive lines from the original file. "
        "Be mindful of whitespaces!\n"
        "* If the `old_str` parameter is not unique in the file, the replacement will not be performed. Make sure "
        "to include enough context in `old_str` to make it unique\n"
        "* The `new_str` parameter should contain the edited lines that should replace the `old_str`"
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": list(COMMANDS), "description": "The command to run."},
            "path": {"type": "string", "description": "Absolute path to file or directory, e.g. `/testbed/file.py`."},
            "file_text": {"type": "string", "description": "Required for `create`: the content of the new file."},
            "old_str": {"type": "string", "description": "Required for `str_replace`: the exact text to replace."},
            "new_str": {
                "type": "string",
                "description": "For `str_replace`: the new text (empty deletes `old_str`). Required for `insert`.",
            },
            "insert_line": {
                "type": "integer",
                "description": "Required for `insert`: `new_str` is inserted AFTER this line (0 = at the top).",
            },
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "Optional for `view` of a file: [start, end] lines, 1-based; end -1 means to the end.",
            },
        },
        "required": ["command", "path"],
    }

    def __init__(self) -> None:
        self._history: dict[str, list[bytes | None]] = defaultdict(list)  # per path; None: did not exist

    async def run(self, deployment: Deployment, arguments: dict[str, Any]) -> ToolResult:
        command, path = arguments["command"], arguments["path"]
        if command not in COMMANDS:
            allowed = ", ".join(f'"{name}"' for name in COMMANDS)
            raise ToolError(f"Unrecognized command {command}. The allowed commands for the {self.name} tool are: {allowed}")
        if command == "view":  # one round trip: reading tells a file from a directory or nothing
            output = await self._view(deployment, path, arguments.get("view_range"))
            return ToolResult(output)
        await self._validate_path(deployment, command, path)
        if command == "create":
            output = await self._create(deployment, path, arguments.get("file_text"))
        elif command == "str_replace":
            output = await self._str_replace(deployment, path, arguments.get("old_str"), arguments.get("new_str"))
        elif command == "insert":
            output = await self._insert(deployment, path, arguments.get("insert_line"), arguments.get("new_str"))
        else:
            output = await self._undo(deployment, path)
        return ToolResult(output)

    @staticmethod
    def _require_absolute(deployment: Deployment, path: str) -> None:
        if not PurePosixPath(path).is_absolute():
            base = deployment.workdir or "/"
            raise ToolError(
                f"The path {path} is not an absolute path, it should start with `/`. "
                f"Maybe you meant {PurePosixPath(base) / path}?"
            )

    async def _validate_path(self, deployment: Deployment, command: str, path: str) -> None:
        """For every command but `view` (which finds out by reading): a ToolError in SWE-agent's words
        unless `path` is a file, or for `create` nothing yet."""
        self._require_absolute(deployment, path)
        quoted = shlex.quote(path)
        probe = await deployment.run(f"if [ -d {quoted} ]; then echo directory; elif [ -e {quoted} ]; then echo file; else echo missing; fi")
        kind = probe.output.strip()
        if kind == "missing" and command != "create":
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if kind != "missing" and command == "create":
            raise ToolError(f"File already exists at: {path}. Cannot overwrite files using command `create`.")
        if kind == "directory":
            raise ToolError(f"The path {path} is a directory and only the `view` command can be used on directories")

    async def _read_text(self, deployment: Deployment, path: str) -> str:
        try:
            return await deployment.read_text(path)
        except UnicodeDecodeError:
            raise ToolError(f"The file {path} is not UTF-8 text; inspect or change it with execute_bash.") from None

    async def _view(self, deployment: Deployment, path: str, view_range: Any) -> str:
        self._require_absolute(deployment, path)
        try:
            content = await self._read_text(deployment, path)
        except SandboxFileNotFoundError:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.") from None
        except IsADirectoryError:
            if view_range:
                raise ToolError("The `view_range` parameter is not allowed when `path` points to a directory.") from None
            # hidden relative to the viewed directory: an absolute path may hold a dot directory (a local
            # workspace lives under ~/.cache) and must not hide everything
            listing = await deployment.run(f"cd -- {shlex.quote(path)} && find . -maxdepth 2 -not -path '*/.*' | LC_ALL=C sort")
            root = path.rstrip("/") or "/"
            shown = "".join((root if line == "." else root.rstrip("/") + line[1:]) + "\n" for line in listing.output.splitlines())
            return f"Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n{clip(shown)}\n"
        if not view_range:
            return numbered(content, path)
        if len(view_range) != 2 or not all(isinstance(number, int) for number in view_range):
            raise ToolError("Invalid `view_range`. It should be a list of two integers.")
        lines = content.split("\n")
        count = len(lines)
        first, last = view_range
        if first < 1 or first > count:
            raise ToolError(
                f"Invalid `view_range`: {view_range}. Its first element `{first}` should be within the range of "
                f"lines of the file: {[1, count]}"
            )
        if last > count:
            raise ToolError(
                f"Invalid `view_range`: {view_range}. Its second element `{last}` should be smaller than the number "
                f"of lines in the file: `{count}`"
            )
        if last != -1 and last < first:
            raise ToolError(
                f"Invalid `view_range`: {view_range}. Its second element `{last}` should be larger or equal than its "
                f"first `{first}`"
            )
        selected = lines[first - 1 :] if last == -1 else lines[first - 1 : last]
        return numbered("\n".join(selected), path, first)

    async def _create(self, deployment: Deployment, path: str, file_text: str | None) -> str:
        if file_text is None:
            raise ToolError("Parameter `file_text` is required for command: create")
        await deployment.write_file(path, file_text)
        self._history[path].append(None)
        return f"File created successfully at: {path}"

    async def _str_replace(self, deployment: Deployment, path: str, old_str: str | None, new_str: str | None) -> str:
        if old_str is None:
            raise ToolError("Parameter `old_str` is required for command: str_replace")
        new_str = new_str or ""
        content = await self._read_text(deployment, path)
        starts = _occurrences(content, old_str) if old_str else []
        if not starts:
            raise ToolError(f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}.")
        if len(starts) > 1:
            lines = [content.count("\n", 0, start) + 1 for start in starts]
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines {lines}. "
                "Please ensure it is unique"
            )
        if new_str == old_str:
            raise ToolError(f"No replacement was performed, `new_str` is the same as `old_str` in {path}.")
        new_content = content.replace(old_str, new_str, 1)
        await deployment.write_file(path, new_content)
        self._history[path].append(content.encode())
        line = content.count("\n", 0, starts[0])
        start = max(0, line - SNIPPET_LINES)
        end = line + SNIPPET_LINES + new_str.count("\n")
        snippet = "\n".join(new_content.split("\n")[start : end + 1])
        return f"The file {path} has been edited. " + numbered(snippet, f"a snippet of {path}", start + 1) + REVIEW

    async def _insert(self, deployment: Deployment, path: str, insert_line: int | None, new_str: str | None) -> str:
        if insert_line is None:
            raise ToolError("Parameter `insert_line` is required for command: insert")
        if new_str is None:
            raise ToolError("Parameter `new_str` is required for command: insert")
        content = await self._read_text(deployment, path)
        lines = content.split("\n")
        if insert_line < 0 or insert_line > len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines of the file: "
                f"{[0, len(lines)]}"
            )
        new_lines = new_str.split("\n")
        await deployment.write_file(path, "\n".join(lines[:insert_line] + new_lines + lines[insert_line:]))
        self._history[path].append(content.encode())
        snippet = lines[max(0, insert_line - SNIPPET_LINES) : insert_line] + new_lines + lines[insert_line : insert_line + SNIPPET_LINES]
        first = max(1, insert_line - SNIPPET_LINES + 1)
        return (
            f"The file {path} has been edited. "
            + numbered("\n".join(snippet), "a snippet of the edited file", first)
            + REVIEW_INSERT
        )

    async def _undo(self, deployment: Deployment, path: str) -> str:
        if not self._history[path]:
            raise ToolError(f"No edit history found for {path}.")
        previous = self._history[path].pop()
        if previous is None:
            await deployment.run(f"rm -f -- {shlex.quote(path)}")
            return f"Last edit to {path} undone successfully: the file created by `create` was removed."
        await deployment.write_file(path, previous)
        return f"Last edit to {path} undone successfully. " + numbered(previous.decode(), path)


def _occurrences(content: str, text: str) -> list[int]:
    starts, at = [], content.find(text)
    while at >= 0:
        starts.append(at)
        at = content.find(text, at + 1)
    return starts
