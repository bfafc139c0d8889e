"""What the viewer reads, in one schema: an eval run directory, a `grade` output, a trajectory JSON, a gateway
JSONL or a token record each become `Trajectory` rows, so the pages, the index and the checks know one shape only.

A token record is what `UniAgentLoop` and `GatewayAgentLoop` write to `rollout.trajectory_dir` (one JSON
object per file, or one per JSONL line):

    prompt_ids         list[int]    the first prompt, as the model saw it
    response_ids       list[int]    everything after it: sampled turns and the tool output/glue between them
    response_mask      list[int]    1 for a sampled token (trained on), 0 for tool output and template glue
    response_logprobs  list[float]  the sampler's logprob of each response token (null when not recorded)
    tokens             list[str]    optional: each response id decoded (else `--tokenizer`, else ids only)
    spans              list[dict]   optional: {"start", "end", "role"} over response positions (role "assistant",
                                    "tool", "user" or "glue"); only "assistant" spans may hold mask-1 tokens
    messages, tools, exit_reason, masked, reward, reward_report, patch, instance_id, language
    min_global_steps, max_global_steps   the weight versions of the first and last sampled token

A gateway chain (`gateway/chains.py` `Chain.record`) is the same with `session_id` and `chain`; an eval
trajectory (`agent/react.py` `run_episode`) has `steps`, `usage` and `reward_report` but no token ids; a
`grade` report (`grade`'s `OUTPUT/RUN_ID/INSTANCE.json`) is a reward report alone.

`turns` is one thing for every kind: the model's turns (sampled assistant turns; an eval trajectory's steps).
verl's `num_turns` counts the task and the tool messages too, so a token record's is not used for it.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.eval.records import has_verdict
from uni_agent_gym.tokens.texts import token_texts

try:  # 2-3x faster on records of number lists; the index reads every record once
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson comes with the `verl` and `view` extras
    _fast_loads = None


class ViewerInputError(UniAgentGymError, ValueError):
    """A file the viewer was given cannot be read as trajectories; the message names the file."""


@dataclasses.dataclass
class Trajectory:
    """One trajectory, whatever file it came from; fields a source lacks stay None (or empty)."""

    source: str  # the file, and `:LINE` for a JSONL line
    kind: str  # "eval", "gateway", "tokens" or "report"
    instance_id: str
    exit_reason: str | None = None
    reward: float | None = None
    resolved: bool | None = None
    masked: bool | None = None
    turns: int | None = None  # the model's turns (see the module docstring)
    seconds: float | None = None
    error: str | None = None
    patch: str | None = ""  # None: the record holds no patch (a task graded by a command records none)
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
    tools: list[dict[str, Any]] | None = None
    weight_versions: dict[str, Any] | None = None
    language: str | None = None
    repo: str | None = None  # the record's own, else what a SWE-bench-shaped instance id names

    @property
    def token_count(self) -> int | None:
        """Prompt plus response tokens: the recorded ids, else the model's usage, else None."""
        if self.response_ids is not None:
            return len(self.prompt_ids or []) + len(self.response_ids)
        if self.usage:
            return int(self.usage.get("prompt_tokens", 0)) + int(self.usage.get("completion_tokens", 0))
        return None


def load(path: str | Path, problems: list[str] | None = None) -> list[Trajectory]:
    """The trajectories at `path`: a directory (see `record_files`), a `.json` file or a `.jsonl` file. A
    file or line that is not a trajectory is skipped and described in `problems` (when given); a path with
    no trajectory at all raises `ViewerInputError`."""
    path = Path(path)
    problems = [] if problems is None else problems
    records = []
    for file in record_files(path):
        for item in read_file(file, path if path.is_dir() else None):
            if isinstance(item, str):
                problems.append(item)
            else:
                records.append(item[2])
    if not records:
        first = f" ({len(problems)} skipped; the first: {problems[0]})" if problems else ""
        raise ViewerInputError(f"{path}: no trajectories in it{first}")
    return records


def record_files(path: Path) -> list[Path]:
    """The files that hold `path`'s records, in name order (see `record_directories`)."""
    if not path.exists():
        raise ViewerInputError(f"{path} does not exist")
    if not path.is_dir():
        return [path]
    found = sorted(Path(entry.path) for directory in record_directories(path) for entry in scan(directory))
    if not found:
        raise ViewerInputError(
            f"{path}: no trajectories/*.json, *.json or *.jsonl in it (expects an eval run directory, a `grade` output, "
            "a rollout.trajectory_dir, a .json or a .jsonl file)"
        )
    return found


def check_path(path: Path) -> None:
    """Say what is wrong with PATH (missing, or a directory with no record file) without listing it all."""
    if not path.exists():
        raise ViewerInputError(f"{path} does not exist")
    if path.is_dir() and not any(next(scan(directory), None) for directory in record_directories(path) if directory.is_dir()):
        record_files(path)  # raises, saying what a directory of records holds


def record_directories(directory: Path) -> list[Path]:
    """Where a directory's records are: an eval run's `trajectories/`, else a `grade` output's run
    directories (`<model>.<run_id>.json` summaries beside a `<run_id>/` of per-instance reports), else the
    directory itself (a training loop's `rollout.trajectory_dir`)."""
    if (directory / "trajectories").is_dir():
        return [directory / "trajectories"]
    with os.scandir(directory) as entries:  # no stat per entry: cheap on a directory of 100,000 records
        subdirectories = sorted(entry.name for entry in entries if entry.is_dir())
    runs = [name for name in subdirectories if next(directory.glob(f"*.{glob.escape(name)}.json"), None)]
    return [directory / run for run in runs] or [directory]


def scan(directory: Path) -> Iterator[os.DirEntry]:
    """The record files of one directory (`*.json`, and `*.jsonl` outside an eval run), unsorted: a
    directory of 100,000 records is listed without holding them all."""
    suffixes = (".json",) if directory.name == "trajectories" else (".json", ".jsonl")
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(suffixes) and not entry.name.startswith(".") and entry.is_file():
                yield entry


def read_file(file: Path, run: Path | None = None, start: int = 0, first_line: int = 1) -> Iterator[tuple[int, int, Trajectory] | str]:
    """(byte offset, line, trajectory) for each record of `file`, or a one-line problem for what is not
    one. A JSONL file is read from byte `start` (its line `first_line`) up to its last complete line, so a
    file still being appended to can be read again from where this stopped. `run`: the eval run directory
    whose `results/` may hold a trajectory's report."""
    if file.suffix != ".jsonl":
        try:
            yield from ((0, 1, record) for record in _json_file(file, run))
        except ViewerInputError as exc:
            yield str(exc)
        except OSError as exc:  # gone between the listing and the read, or unreadable
            yield f"{file}: cannot be read ({exc.strerror})"
        return
    with open(file, "rb") as handle:
        handle.seek(start)
        offset, number = start, first_line
        for line in handle:
            if not line.endswith(b"\n"):
                break  # a line still being written: read next time
            if line.strip():
                try:
                    yield offset, number, _record(parse(line), f"{file}:{number}")
                except ValueError as exc:  # ViewerInputError, JSONDecodeError, orjson's error, UnicodeDecodeError
                    yield f"{exc if isinstance(exc, ViewerInputError) else f'{file}:{number}: not JSON ({_why(exc)})'}; line skipped"
            offset, number = offset + len(line), number + 1


def end_of_complete_lines(file: Path, start: int) -> tuple[int, int]:
    """(byte offset after the last complete line, complete lines) of `file` from byte `start`."""
    with open(file, "rb") as handle:
        handle.seek(start)
        offset, lines = start, 0
        for line in handle:
            if not line.endswith(b"\n"):
                break
            offset, lines = offset + len(line), lines + 1
    return offset, lines


def read_one(file: Path, offset: int, line: int, run: Path | None = None) -> Trajectory:
    """The record at `offset` of `file` (as `read_file` found it)."""
    if file.suffix != ".jsonl":
        records = _json_file(file, run)
        return records[0]
    with open(file, "rb") as handle:
        handle.seek(offset)
        return _record(parse(handle.readline()), f"{file}:{line}")


def parse(data: bytes | str) -> Any:
    """JSON, by orjson where it is installed; Python's reader for what orjson refuses (NaN, Infinity)."""
    if _fast_loads is not None:
        try:
            return _fast_loads(data)
        except ValueError:
            pass
    return json.loads(data)


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return str(exc).split(":")[0]


def _json_file(file: Path, run: Path | None) -> list[Trajectory]:
    """The records of one `.json` file: one object, or a list of them; an eval trajectory without a report
    gets `run/results/<same name>`."""
    data = _read_json(file)
    if isinstance(data, list):
        records = [_record(item, f"{file}[{index}]") for index, item in enumerate(data)]
    else:
        records = [_record(data, str(file))]
    result = run / "results" / file.name if run is not None else None
    if result is not None and len(records) == 1 and records[0].reward_report is None and result.is_file():
        report = _read_json(result)  # `null` where the episode ended before grading (env_error): its trajectory's error says why
        if isinstance(report, dict):
            records[0].reward_report = report
            records[0].patch = records[0].patch or report.get("patch") or ""
    return records


def _read_json(path: Path) -> Any:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ViewerInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return parse(text)
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
    if "instance_id" in data and "status" in data and ("tests" in data or "resolved" in data):
        return _grade_report(data, where)
    if "submitted_instances" in data:
        raise ViewerInputError(f"{where}: the summary of a `grade` run, not a trajectory (its reports are in the directory named after its run id)")
    keys = ", ".join(sorted(data)[:8]) or "none"
    raise ViewerInputError(f"{where}: not a trajectory (expects instance_id with steps/messages, or response_ids; keys: {keys})")


def _language(data: dict[str, Any], report: dict[str, Any] | None) -> str | None:
    return data.get("language") or (report or {}).get("language")


SWE_BENCH_ID = re.compile(r"(?P<owner>[^/_]+(?:_[^/_]+)*)__(?P<name>.+)-\d+")


def _repo(data: dict[str, Any], report: dict[str, Any] | None, instance_id: str) -> str | None:
    """The record's repository; records written before `eval` kept it (and token records) have only the
    instance id, which in SWE-bench's shape (`owner__name-123`) names it."""
    found = data.get("repo") or (report or {}).get("repo")
    if found:
        return str(found)
    match = SWE_BENCH_ID.fullmatch(instance_id)
    return f"{match['owner']}/{match['name']}" if match else None


def _eval_trajectory(data: dict[str, Any], where: str) -> Trajectory:
    report = data.get("reward_report")
    return Trajectory(
        source=where,
        kind="eval",
        instance_id=str(data["instance_id"]),
        exit_reason=data.get("exit_reason"),
        reward=data.get("reward"),
        resolved=data.get("resolved") if has_verdict(data) else None,  # not graded, as eval's report counts it
        masked=data.get("masked"),
        turns=data.get("turns", len(data.get("steps") or [])),
        seconds=data.get("seconds"),
        error=data.get("error"),
        patch=data.get("patch") or (report or {}).get("patch") or "",
        usage=data.get("usage") or {},
        messages=data.get("messages") or [],
        steps=data.get("steps") or [],
        reward_report=report,
        language=_language(data, report),
        repo=_repo(data, report, str(data["instance_id"])),
    )


def _grade_report(data: dict[str, Any], where: str) -> Trajectory:
    return Trajectory(
        source=where, kind="report", instance_id=str(data["instance_id"]), exit_reason=None, reward=data.get("reward"),
        resolved=data.get("resolved"), error=data.get("error"), patch=data.get("patch") or "", reward_report=data,
        language=_language(data, None), repo=_repo(data, None, str(data["instance_id"])),
    )  # fmt: skip


def model_turns(data: dict[str, Any]) -> int | None:
    """A token record's sampled assistant turns: its assistant spans, else its assistant messages (both
    hold only what follows the first prompt), else a gateway chain's `num_turns` (which counts exactly those)."""
    if data.get("spans"):
        return sum(1 for span in data["spans"] if span.get("role") == "assistant")
    if "session_id" in data and isinstance(data.get("num_turns"), int):
        return data["num_turns"]
    messages = data.get("messages") or []
    if messages:
        return sum(1 for message in messages if isinstance(message, dict) and message.get("role") == "assistant")
    return None


def _token_record(data: dict[str, Any], where: str) -> Trajectory:
    for key in ("prompt_ids", "response_ids", "response_mask"):
        if not isinstance(data.get(key, []), list):
            raise ViewerInputError(f"{where}: {key} must be a list, got {type(data[key]).__name__}")
    gateway = "session_id" in data
    report = data.get("reward_report")
    instance = data.get("instance_id") or (f"{data['session_id']}#{data.get('chain', 0)}" if gateway else where)
    versions = {key: data[key] for key in ("min_global_steps", "max_global_steps") if data.get(key) is not None}
    patch = data.get("patch") or (report or {}).get("patch")
    if patch is None and report is not None and "patch" in report:
        patch = ""  # the grading captured an empty patch
    return Trajectory(
        source=where,
        kind="gateway" if gateway else "tokens",
        instance_id=str(instance),
        exit_reason=data.get("exit_reason") or data.get("finish_reason"),
        reward=data.get("reward", (report or {}).get("reward")),
        resolved=data.get("resolved", (report or {}).get("resolved")),
        masked=data.get("masked"),
        turns=model_turns(data),
        seconds=data.get("seconds"),
        error=data.get("error"),
        patch=patch,
        messages=data.get("messages") or [],
        reward_report=report,
        prompt_ids=data.get("prompt_ids") or [],
        response_ids=data["response_ids"],
        response_mask=data.get("response_mask") or [],
        response_logprobs=data.get("response_logprobs"),
        tokens=data.get("tokens"),
        spans=data.get("spans"),
        tools=data.get("tools"),
        weight_versions=versions or data.get("weight_versions"),
        language=_language(data, report),
        repo=_repo(data, report, str(instance)),
    )


def load_tokenizer(directory: str | Path) -> Any:
    """A tokenizer from a local directory (nothing is downloaded), as its tokenizer.json declares it: token texts
    decoded by a class that replaces the file's pipeline lose their spaces and newlines."""
    from uni_agent_gym.tokenizer_loading import load_tokenizer as load

    return load(str(directory), local_only=True)


def add_token_texts(records: list[Trajectory], tokenizer: Any) -> None:
    """Decode the response ids of records without `tokens` with `tokenizer` (or the tokenizer in that
    local directory)."""
    if isinstance(tokenizer, (str, Path)):
        tokenizer = load_tokenizer(tokenizer)
    for record in records:
        if record.response_ids is not None and record.tokens is None:
            record.tokens = token_texts(tokenizer, record.response_ids)
