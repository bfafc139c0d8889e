"""The viewer's HTML documents. One self-contained file for a few trajectories: the data as JSON inside
`<script type="application/json">` tags (one small tag for the run table, one per trajectory, parsed only
when it is opened), the CSS and JS inline, nothing fetched from the network, so the file can be mailed,
attached to an issue or opened from a cluster's shared disk. The served app's page is built from the same
parts (`trajectory.html`, `common.js`, `trajectory.js`, `page.css`) with its own run page (`app.html`,
`app.js`), so neither needs a CDN.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uni_agent_gym.viewer.checks import check
from uni_agent_gym.viewer.records import Trajectory
from uni_agent_gym.viewer.shown import TURNS_MEANING, detail, row

HERE = Path(__file__).resolve().parent


def embedded(data: Any) -> str:
    """JSON safe inside a `<script>` tag: `<`, `>` and `&` escaped, so `</script>` in data cannot end it."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def document(title: str, run_page: str, data: list[str], scripts: list[str]) -> str:
    """An HTML document: the header, `run_page` (an HTML file beside this module), the trajectory page,
    the `data` tags, then the `scripts` (JS files beside this module) inline."""
    title_html = title.replace("&", "&amp;").replace("<", "&lt;")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', '<link rel="icon" href="data:,">',
        f"<title>uni-agent-gym view: {title_html}</title>", f"<style>{(HERE / 'page.css').read_text()}</style></head><body>",
        '<header><a href="#" id="home">uni-agent-gym view</a> <span id="title"></span></header>', "<main>",
        (HERE / run_page).read_text(), (HERE / "trajectory.html").read_text(), "</main>", *data,
        *(f"<script>{(HERE / name).read_text()}</script>" for name in ["common.js", "trajectory.js", *scripts]), "</body></html>",
    ])  # fmt: skip


def page(records: list[Trajectory], title: str, problems: list[str] | None = None, tokenizer: Any = None) -> str:
    """The whole single-file HTML document of `records`."""
    rows, details = [], []
    for index, record in enumerate(records):
        found = check(record, tokenizer)
        rows.append(row(record, found))
        details.append(f'<script type="application/json" id="t-{index}">{embedded(detail(record, found, arrays=True))}</script>')
    run = {"title": title, "problems": problems or [], "rows": rows, "turns_meaning": TURNS_MEANING}
    return document(title, "page.html", [f'<script type="application/json" id="run-data">{embedded(run)}</script>', *details], ["page.js"])


def write_html(records: list[Trajectory], output: str | Path, title: str, problems: list[str] | None = None, tokenizer: Any = None) -> Path:
    """Write the page of `records` to `output` and return its path."""
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(page(records, title, problems, tokenizer), encoding="utf-8")
    return output
