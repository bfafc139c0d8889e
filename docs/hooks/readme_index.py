"""MkDocs hook: the site's home page is the README.

README.md is the repository's front page; the site shows the same text as `index.md` instead of a copy
that could drift. Its links point into docs/ (`docs/rewards.md#...`, relative to the repository root), so
the `docs/` prefix is dropped to make them relative to the site. `mkdocs serve` watches README.md too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    if files.get_file_from_path("index.md") is not None:
        raise PluginError("docs/index.md exists, but the home page is generated from README.md: remove one")
    text = re.sub(r"\]\(docs/", "](", README.read_text(encoding="utf-8"))
    files.append(File.generated(config, "index.md", content=text))
    return files


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    server.watch(str(README))
    return server
