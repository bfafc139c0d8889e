"""What a page shows of one record, as JSON: its row in the run table, its trajectory page, and its tokens a
page at a time. The single-file page embeds these; the served app answers them one request at a time, so
both pages draw the same data with the same code (`trajectory.js`)."""

from __future__ import annotations

import math
from typing import Any

from uni_agent_gym.viewer.checks import Check
from uni_agent_gym.viewer.records import Trajectory

TURNS_MEANING = "the model's turns: sampled assistant turns (an eval run's steps)"


def row(record: Trajectory, found: Check) -> dict[str, Any]:
    """The record's row in the run table."""
    return {"instance": record.instance_id, "kind": record.kind, "exit_reason": record.exit_reason, "reward": record.reward,
            "resolved": record.resolved, "masked": record.masked, "turns": record.turns, "tokens": record.token_count,
            "seconds": record.seconds, "flags": len(found.flags), "error": record.error, "repo": record.repo, "language": record.language}  # fmt: skip


def _rounded(logprobs: list[Any] | None) -> list[Any] | None:
    """Logprobs to 4 decimals for the page (a third of a full float's characters), -inf and NaN as null
    (JSON has neither); the checks read the record's own values, so a sampled token's exact 0.0 is still flagged."""
    if logprobs is None:
        return None
    return [(round(value, 4) if math.isfinite(value) else None) if isinstance(value, float) else value for value in logprobs]


def _steps(record: Trajectory) -> list[dict[str, Any]]:
    """Each step with the assistant message that asked for it (the k-th assistant message)."""
    said = [message for message in record.messages if message.get("role") == "assistant"]
    return [{**step, "assistant": said[index] if index < len(said) else None} for index, step in enumerate(record.steps)]


def detail(record: Trajectory, found: Check, *, arrays: bool) -> dict[str, Any]:
    """The trajectory page's data; with `arrays`, the token arrays too (the single-file page), else only
    their length (the served app fetches them a page at a time)."""
    data = {
        "source": record.source, "kind": record.kind, "instance_id": record.instance_id, "exit_reason": record.exit_reason,
        "reward": record.reward, "resolved": record.resolved, "masked": record.masked, "turns": record.turns,
        "seconds": record.seconds, "error": record.error, "patch": record.patch, "usage": record.usage,
        "steps": _steps(record), "messages": record.messages if not record.steps else [], "reward_report": record.reward_report,
        "prompt_length": len(record.prompt_ids) if record.prompt_ids is not None else None,
        "token_count": len(record.response_ids) if record.response_ids is not None else None,
        "weight_versions": record.weight_versions, "language": record.language, "repo": record.repo,
        "check": {"counts": {str(mask): count for mask, count in sorted(found.counts.items())}, "flags": found.flags,
                  "notes": found.notes, "unchecked": found.unchecked},
    }  # fmt: skip
    if arrays:
        data["arrays"] = {"ids": record.response_ids, "mask": record.response_mask, "logprobs": _rounded(record.response_logprobs),
                          "tokens": record.tokens, "bad": found.bad, "spans": found.spans}  # fmt: skip
    return data


def token_page(record: Trajectory, found: Check, offset: int, limit: int) -> dict[str, Any]:
    """Response tokens [offset, offset + limit): ids, mask, logprobs, texts, the flagged positions and the
    roles of the spans that start among them (the same slice `trajectory.js` takes of `arrays`)."""
    end = offset + limit
    ids = record.response_ids or []
    mask = record.response_mask or []
    return {
        "offset": offset, "ids": ids[offset:end], "mask": mask[offset:end], "previous_mask": mask[offset - 1] if 0 < offset <= len(mask) else None,
        "logprobs": _rounded(record.response_logprobs[offset:end]) if record.response_logprobs is not None else None,
        "tokens": record.tokens[offset:end] if record.tokens is not None else None,
        "bad": [position for position in found.bad if offset <= position < end],
        "roles": [[span["start"], span["role"]] for span in found.spans if offset <= span["start"] < end],
    }  # fmt: skip
