"""One self-contained HTML file of a run: the data as JSON inside `<script type="application/json">` tags
(one small tag for the run table, one per trajectory, parsed only when it is opened), the page's CSS and
JS inline (`page.css`, `page.js` beside this module), nothing fetched from the network, so the file can be
mailed, attached to an issue or opened from a cluster's shared disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uni_agent_gym.viewer.checks import check, spans_of
from uni_agent_gym.viewer.records import Trajectory

HERE = Path(__file__).resolve().parent


def embedded(data: Any) -> str:
    """JSON safe inside a `<script>` tag: `<`, `>` and `&` escaped, so `</script>` in data cannot end it."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _steps(record: Trajectory) -> list[dict[str, Any]]:
    """Each step with the assistant message that asked for it (the k-th assistant message)."""
    said = [message for message in record.messages if message.get("role") == "assistant"]
    return [{**step, "assistant": said[index] if index < len(said) else None} for index, step in enumerate(record.steps)]


def _row(record: Trajectory, flags: int) -> dict[str, Any]:
    return {"instance": record.instance_id, "kind": record.kind, "exit_reason": record.exit_reason, "reward": record.reward,
            "resolved": record.resolved, "masked": record.masked, "turns": record.turns, "tokens": record.token_count,
            "seconds": record.seconds, "flags": flags}  # fmt: skip


def _shown(logprobs: list[float] | None) -> list[float] | None:
    """Logprobs to 4 decimals for the page (a third of a full float's characters: a 2,000-trajectory run is a
    smaller file); the checks read the record's own values, so a sampled token's exact 0.0 is still flagged."""
    return None if logprobs is None else [round(value, 4) if isinstance(value, float) else value for value in logprobs]


def _detail(record: Trajectory, found) -> dict[str, Any]:
    return {
        "source": record.source, "kind": record.kind, "instance_id": record.instance_id, "exit_reason": record.exit_reason,
        "reward": record.reward, "resolved": record.resolved, "masked": record.masked, "turns": record.turns,
        "seconds": record.seconds, "error": record.error, "patch": record.patch, "usage": record.usage,
        "steps": _steps(record), "messages": record.messages if not record.steps else [], "reward_report": record.reward_report,
        "prompt_length": len(record.prompt_ids) if record.prompt_ids is not None else None,
        "response_ids": record.response_ids, "response_mask": record.response_mask,
        "response_logprobs": _shown(record.response_logprobs), "tokens": record.tokens, "spans": spans_of(record),
        "weight_versions": record.weight_versions,
        "check": {"counts": {str(mask): count for mask, count in sorted(found.counts.items())}, "flags": found.flags, "bad": found.bad},
    }  # fmt: skip


def page(records: list[Trajectory], title: str, problems: list[str] | None = None) -> str:
    """The whole HTML document of `records`."""
    rows, details = [], []
    for index, record in enumerate(records):
        found = check(record)
        rows.append(_row(record, len(found.flags)))
        details.append(f'<script type="application/json" id="t-{index}">{embedded(_detail(record, found))}</script>')
    run = {"title": title, "problems": problems or [], "rows": rows}
    css = (HERE / "page.css").read_text()
    js = (HERE / "page.js").read_text()
    title_html = title.replace("&", "&amp;").replace("<", "&lt;")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>uni-agent-gym view: {title_html}</title>", f"<style>{css}</style></head><body>",
        (HERE / "page.html").read_text(),
        f'<script type="application/json" id="run-data">{embedded(run)}</script>', *details,
        f"<script>{js}</script>", "</body></html>",
    ])  # fmt: skip


def write_html(records: list[Trajectory], output: str | Path, title: str, problems: list[str] | None = None) -> Path:
    """Write the page of `records` to `output` and return its path."""
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(page(records, title, problems), encoding="utf-8")
    return output
