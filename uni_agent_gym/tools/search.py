"""`search`: find a term in a file (matching lines) or a directory (files with match counts)."""

from __future__ import annotations

import shlex
from typing import Any

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.tools.base import Tool, ToolError, ToolResult

MAX_FILES = 100
MAX_LINES = 100


class Search(Tool):
    name = "search"
    description = (
        "Search for a literal term in a file or directory. In a directory it lists the files that contain the "
        "term with their number of matches (hidden and binary files skipped); in a file it shows the matching "
        "lines with their line numbers. Results are capped: narrow the search when told to."
    )
    parameters = {
        "type": "object",
        "properties": {
            "search_term": {"type": "string", "description": "The literal text to search for."},
            "path": {"type": "string", "description": "File or directory to search in; the repository root when omitted."},
        },
        "required": ["search_term"],
    }

    async def run(self, deployment: Deployment, arguments: dict[str, Any]) -> ToolResult:
        term = arguments["search_term"]
        path = arguments.get("path") or deployment.workdir or "."
        if not term:
            raise ToolError("The `search_term` must not be empty.")
        quoted_path, quoted_term = shlex.quote(path), shlex.quote(term)
        kind = await deployment.run(f"if [ -d {quoted_path} ]; then echo directory; elif [ -f {quoted_path} ]; then echo file; else echo missing; fi")
        if kind.output.strip() == "missing":
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if kind.output.strip() == "file":
            found = await deployment.run(f"grep -nF -- {quoted_term} {quoted_path} | head -n {MAX_LINES + 1}")
            lines = found.output.splitlines()
            if not lines:
                return ToolResult(f'No matches found for "{term}" in {path}')
            if len(lines) > MAX_LINES:
                return ToolResult(
                    f'More than {MAX_LINES} lines matched "{term}" in {path}; the first {MAX_LINES}:\n'
                    + "\n".join(lines[:MAX_LINES])
                    + "\nNarrow your search."
                )
            return ToolResult(f'Matches for "{term}" in {path}:\n' + "\n".join(lines) + f'\nEnd of matches for "{term}" in {path}')
        found = await deployment.run(
            f"(cd {quoted_path} && grep -rIcF --exclude-dir='.?*' --exclude='.*' -- {quoted_term} .) | grep -v ':0$' | LC_ALL=C sort"
        )
        counts = [line.rsplit(":", 1) for line in found.output.splitlines() if ":" in line]
        if not counts:
            return ToolResult(f'No matches found for "{term}" in {path}')
        if len(counts) > MAX_FILES:
            return ToolResult(f'More than {MAX_FILES} files matched for "{term}" in {path}. Please narrow your search.')
        total = sum(int(count) for _, count in counts)
        listing = "\n".join(f"{file} ({count} matches)" for file, count in counts)
        return ToolResult(f'Found {total} matches for "{term}" in {path}:\n{listing}\nEnd of matches for "{term}" in {path}')
