"""MkDocs hook: a `\\|` inside a code span of a table row shows as `|` on the site, as it does on GitHub.

GitHub's Markdown splits a table row at every unescaped pipe, code spans included, so a pipe in a cell's
code is written `\\|` (`<\\|python_tag\\|>`) and GitHub drops the backslash. Python-Markdown keeps code spans
whole, so there the backslash would show. The pages are written to read right on GitHub; this makes the
site read the same.
"""

from __future__ import annotations

import re
from typing import Any

CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    lines = markdown.split("\n")
    fenced = False
    for number, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.lstrip().startswith("|") and "\\|" in line:
            lines[number] = CODE_SPAN.sub(lambda m: m.group(1) + m.group(2).replace("\\|", "|") + m.group(1), line)
    return "\n".join(lines)
