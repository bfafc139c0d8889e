"""Per-instance JSON records of `eval` and `grade` (trajectories, grade reports): how a resumed run
tells what is finished.

A record is written atomically, so a run killed mid-write leaves the old record or none, never half
of one. A record whose failure was not the model's doing (the sandbox or the grading infrastructure
failed) does not count as finished when errors are retried: the next run of the same command does
that instance again, and the new record keeps the earlier errors.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def write_record(path: Path, record: dict[str, Any] | None) -> None:
    """Write `record` as JSON to `path` in one step (a temporary file renamed over it)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(record, indent=1))
    os.replace(temporary, path)


def read_record(path: Path) -> dict[str, Any] | None:
    """The record at `path`; None when there is none or it is not a JSON object (then it is done again)."""
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        logger.warning("%s is unreadable (%s); its instance runs again", path, exc)
        return None
    return record if isinstance(record, dict) else None


def to_redo(paths: dict[str, Path], retry: Callable[[dict[str, Any]], bool] | None) -> tuple[list[str], list[str]]:
    """(keys whose instance must run, those of them that are retried after a failure not of the model's
    doing): no record yet, or `retry(record)` is true; `retry=None` retries nothing."""
    pending, retried = [], []
    for key, path in paths.items():
        record = read_record(path)
        if record is None:
            pending.append(key)
        elif retry is not None and retry(record):
            pending.append(key)
            retried.append(key)
    return pending, retried


def keep_earlier_errors(record: dict[str, Any], path: Path) -> dict[str, Any]:
    """`record` with the errors of the record it replaces (if any) under `earlier_errors`."""
    previous = read_record(path)
    if previous is not None:
        record["earlier_errors"] = [*previous.get("earlier_errors", []), previous.get("error")]
    return record


def has_verdict(trajectory: dict[str, Any]) -> bool:
    """Whether an episode was graded: not where the sandbox failed before grading (env_error, no report) or the
    grading failed on the infrastructure (`caused_by`, as `rewards.swebench.infrastructure_failed` reads it; this
    module stays light for the viewer). Rates are over these, in eval's report and in the viewer alike."""
    report = trajectory.get("reward_report")
    return bool(report) and report.get("caused_by") != "infrastructure"
