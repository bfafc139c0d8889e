"""What the viewer reads, in one schema: an eval run directory, a trajectory JSON, a gateway JSONL or a
token record each become `Trajectory` rows, so the pages and the checks know one shape only.

A token record is what `UniAgentLoop` and `GatewayAgentLoop` write to `rollout.trajectory_dir` (one JSON
object per file, or one per JSONL line):

    prompt_ids         list[int]    the first prompt, as the model saw it
    response_ids       list[int]    everything after it: sampled turns and the tool output/glue between them
    response_mask      list[int]    1 for a sampled token (trained on), 0 for tool output and template glue
    response_logprobs  list[float]  the sampler's logprob of each response token (null when not recorded)
    tokens             list[str]    optional: each response id decoded (else `--tokenizer`, else ids only)
    spans              list[dict]   optional: {"start", "end", "role"} over response positions (role "assistant",
                                    "tool", "user" or "glue"); only "assistant" spans may hold mask-1 tokens
    messages, exit_reason, masked, reward, reward_report, patch, instance_id
    min_global_steps, max_global_steps   the weight versions of the first and last sampled token

A gateway chain (`gateway/chains.py` `Chain.record`) is the same with `session_id` and `chain`; an eval
trajectory (`agent/react.py` `run_episode`) has `steps`, `usage` and `reward_report` but no token ids.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.tokens.texts import token_texts


class ViewerInputError(UniAgentGymError, ValueError):
    """A file the viewer was given cannot be read as trajectories; the message names the file."""


@dataclasses.dataclass
class Trajectory:
    """One trajectory, whatever file it came from; fields a source lacks stay None (or empty)."""

    source: str  # the file, and `:LINE` for a JSONL line
    kind: str  # "eval", "gateway" or "tokens"
    instance_id: str
    exit_reason: str | None = None
    reward: float | None = None
    resolved: bool | None = None
    masked: bool | None = None
    turns: int | None = None
    seconds: float | None = None
    error: str | None = None
    patch: str = ""
    usage: dict[str, Any] = dataclasses.field(default_factory=dict)
    messages: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    steps: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    reward_report: dict[str, Any] | None = None
    prompt_ids: list[int] | None = None
    response_ids: list[int] | None = None
    response_mask: list[int] | None = None
    response_logprobs: list[float] | None = None
    tokens: list[str] | None = None
    spans: list[dict[str, Any]] | None = None
    weight_versions: dict[str, Any] | None = None

    @property
    def token_count(self) -> int | None:
        """Prompt plus response tokens: the recorded ids, else the model's usage, else None."""
        if self.response_ids is not None:
            return len(self.prompt_ids or []) + len(self.response_ids)
        if self.usage:
            return int(self.usage.get("prompt_tokens", 0)) + int(self.usage.get("completion_tokens", 0))
        return None


def load(path: str | Path, problems: list[str] | None = None) -> list[Trajectory]:
    """The trajectories at `path`: an eval run directory, a `.json` file or a `.jsonl` file. A malformed
    JSONL line is skipped and described in `problems` (when given); anything else wrong raises
    `ViewerInputError`."""
    path = Path(path)
    problems = [] if problems is None else problems
    if not path.exists():
        raise ViewerInputError(f"{path} does not exist")
    if path.is_dir():
        records = _eval_directory(path, problems)
    elif path.suffix == ".jsonl":
        records = _jsonl(path, problems)
    else:
        records = [_record(item, f"{path}" + (f"[{index}]" if many else "")) for many, index, item in _items(path)]
    if not records:
        raise ViewerInputError(f"{path}: no trajectories in it" + (f" ({len(problems)} malformed line(s))" if problems else ""))
    return records


def _eval_directory(directory: Path, problems: list[str]) -> list[Trajectory]:
    """`trajectories/*.json` (an eval run), each with its `results/<same name>` report when the trajectory lacks
    one; else the directory's own `*.json` (a training loop's `rollout.trajectory_dir`)."""
    found = sorted((directory / "trajectories").glob("*.json")) or sorted(directory.glob("*.json"))
    if not found:
        raise ViewerInputError(
            f"{directory}: no trajectories/*.json or *.json in it (expects an eval run directory, a rollout.trajectory_dir, a .json or a .jsonl file)"
        )
    records = []
    for file in found:
        try:
            record = _record(_read_json(file), str(file))
        except ViewerInputError as exc:
            problems.append(str(exc))
            continue
        result = directory / "results" / file.name
        if record.reward_report is None and result.is_file():
            record.reward_report = _read_json(result)
        records.append(record)
    return records


def _jsonl(path: Path, problems: list[str]) -> list[Trajectory]:
    records = []
    for number, line in enumerate(_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            records.append(_record(json.loads(line), where))
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not JSON ({exc.msg} at column {exc.colno}); line skipped")
        except ViewerInputError as exc:
            problems.append(f"{exc}; line skipped")
    return records


def _items(path: Path):
    """(several, index, item) for a JSON file holding one record or a list of them."""
    data = _read_json(path)
    if isinstance(data, list):
        return [(True, index, item) for index, item in enumerate(data)]
    return [(False, 0, data)]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ViewerInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise ViewerInputError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


def _record(data: Any, where: str) -> Trajectory:
    """One JSON object as a `Trajectory`; the kind is told by its keys."""
    if not isinstance(data, dict):
        raise ViewerInputError(f"{where}: expects a JSON object (a trajectory), got {type(data).__name__}")
    if "response_ids" in data:
        return _token_record(data, where)
    if "instance_id" in data and ("steps" in data or "messages" in data or "exit_reason" in data):
        return _eval_trajectory(data, where)
    keys = ", ".join(sorted(data)[:8]) or "none"
    raise ViewerInputError(f"{where}: not a trajectory (expects instance_id with steps/messages, or response_ids; keys: {keys})")


def _eval_trajectory(data: dict[str, Any], where: str) -> Trajectory:
    report = data.get("reward_report")
    return Trajectory(
        source=where,
        kind="eval",
        instance_id=str(data["instance_id"]),
        exit_reason=data.get("exit_reason"),
        reward=data.get("reward"),
        resolved=data.get("resolved"),
        masked=data.get("masked"),
        turns=data.get("turns", len(data.get("steps") or [])),
        seconds=data.get("seconds"),
        error=data.get("error"),
        patch=data.get("patch") or (report or {}).get("patch") or "",
        usage=data.get("usage") or {},
        messages=data.get("messages") or [],
        steps=data.get("steps") or [],
        reward_report=report,
    )


def _token_record(data: dict[str, Any], where: str) -> Trajectory:
    for key in ("prompt_ids", "response_ids", "response_mask"):
        if not isinstance(data.get(key, []), list):
            raise ViewerInputError(f"{where}: {key} must be a list, got {type(data[key]).__name__}")
    gateway = "session_id" in data
    report = data.get("reward_report")
    instance = data.get("instance_id") or (f"{data['session_id']}#{data.get('chain', 0)}" if gateway else where)
    versions = {key: data[key] for key in ("min_global_steps", "max_global_steps") if key in data}
    return Trajectory(
        source=where,
        kind="gateway" if gateway else "tokens",
        instance_id=str(instance),
        exit_reason=data.get("exit_reason") or data.get("finish_reason"),
        reward=data.get("reward", (report or {}).get("reward")),
        resolved=data.get("resolved", (report or {}).get("resolved")),
        masked=data.get("masked"),
        turns=data.get("num_turns", data.get("turns")),
        seconds=data.get("seconds"),
        error=data.get("error"),
        patch=data.get("patch") or (report or {}).get("patch") or "",
        messages=data.get("messages") or [],
        reward_report=report,
        prompt_ids=data.get("prompt_ids") or [],
        response_ids=data["response_ids"],
        response_mask=data.get("response_mask") or [],
        response_logprobs=data.get("response_logprobs"),
        tokens=data.get("tokens"),
        spans=data.get("spans"),
        weight_versions=versions or data.get("weight_versions"),
    )


def add_token_texts(records: list[Trajectory], tokenizer_dir: str | Path) -> None:
    """Decode the response ids of records without `tokens` with the tokenizer in `tokenizer_dir` (a local
    directory: nothing is downloaded)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), local_files_only=True)
    for record in records:
        if record.response_ids is not None and record.tokens is None:
            record.tokens = token_texts(tokenizer, record.response_ids)
