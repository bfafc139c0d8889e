"""Trajectory records for people: what a training loop hands verl, written to `rollout.trajectory_dir` so that
`uni-agent-gym view` can show it as the model and the trainer saw it (the token record schema is in
`uni_agent_gym/viewer/records.py`). Off by default; each record is bounded (the test log is cut to its tail)
and written off the event loop, atomically; a record that cannot be written is logged, never a failed rollout.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from uni_agent_gym.tokens.texts import token_texts

logger = logging.getLogger(__name__)
LOG_TAIL = 20_000  # characters of the test log a record keeps (the reward report's log can be 20 MB)


def bounded_report(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The reward report with its log cut to the last LOG_TAIL characters."""
    if not report or len(report.get("log") or "") <= LOG_TAIL:
        return report
    return {**report, "log": "[... cut ...]\n" + report["log"][-LOG_TAIL:]}


def output_record(output: Any, tokenizer: Any, **fields: Any) -> dict[str, Any]:
    """A verl `AgentLoopOutput` as a token record: what the trainer got, each response token's text, the
    exit and the weight versions; `fields` add what the loop knows beyond it (messages, spans, report...)."""
    extra = output.extra_fields
    logprobs = output.response_logprobs
    return {
        "instance_id": extra.get("instance_id"), "exit_reason": extra.get("traj_exit_reason"), "masked": extra.get("traj_masked"),
        "reward": output.reward_score, "turns": output.num_turns,
        "prompt_ids": list(output.prompt_ids), "response_ids": list(output.response_ids), "response_mask": list(output.response_mask),
        "response_logprobs": None if logprobs is None else list(logprobs), "tokens": token_texts(tokenizer, list(output.response_ids)),
        "min_global_steps": extra.get("min_global_steps"), "max_global_steps": extra.get("max_global_steps"),
        **fields,
    }  # fmt: skip


async def write_record(directory: str, name: str, record: dict[str, Any]) -> Path | None:
    """`record` as `<directory>/<name>.json` (the name made safe for a file); its path, or None when it could
    not be written (logged)."""
    path = Path(directory).expanduser() / (re.sub(r"[^A-Za-z0-9._-]+", "_", name) + ".json")
    try:
        await asyncio.to_thread(_write, path, json.dumps(record))
        return path
    except (OSError, TypeError, ValueError) as exc:
        logger.warning("The trajectory record %s could not be written: %s", path, exc)
        return None


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as handle:
        handle.write(text)
    os.replace(handle.name, path)  # a reader never sees half a record
