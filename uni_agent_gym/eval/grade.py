"""`uni-agent-gym grade`: grade a `predictions.jsonl` (the official harness's format) in fresh sandboxes.

Each prediction (`instance_id`, `model_name_or_path`, `model_patch`) gets a new sandbox of its
instance; the patch is applied the harness's way (`git apply`, then `--reject`, then `patch --fuzz`)
and graded by `SWEBenchReward`. One JSON report per instance is written as soon as it is known, so a
re-run skips what is done, except `infra_error`s of the infrastructure, which it grades again unless
`retry_errors` is off; a bad prediction or a failing sandbox costs only its own row. The summary has
the fields of the official `<model>.<run_id>.json` report, plus how many instances were retried.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.eval.records import keep_earlier_errors, read_record, to_redo, write_record
from uni_agent_gym.files import read_text
from uni_agent_gym.rewards.swebench import CAUSED_BY, EMPTY_PATCH, RewardResult, SWEBenchReward
from uni_agent_gym.toolchains import language_of

logger = logging.getLogger(__name__)

ERROR_STATUSES = ("patch_failed", "patch_rejected", "test_patch_failed", "timeout", "tests_crashed", "infra_error")


class PredictionsError(UniAgentGymError, ValueError):
    """The predictions file holds nothing to grade (a single bad row is reported for its instance instead)."""


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    """Predictions from a .jsonl file (or a .json list / {id: prediction} mapping); malformed rows are kept
    as rows without a usable patch, so they are reported rather than crash the run. A file with no
    prediction at all (missing, empty, not JSON) is a `PredictionsError`."""
    text = read_text(path, "Predictions file", PredictionsError)
    if str(path).endswith(".jsonl"):
        rows = [_prediction(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        if all("error" in row for row in rows):
            raise PredictionsError(f"Predictions file {path} has no line that is a JSON object (line 1: {rows[0]['error']})")
        return rows
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PredictionsError(f"Predictions file {path} is not valid JSON: {exc}") from None
    items = list(data.values()) if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise PredictionsError(f"Predictions file {path}: expects a non-empty JSON list of predictions or a mapping of them by instance id")
    return [item if isinstance(item, dict) else _bad_row(number, f"not a JSON object ({type(item).__name__})") for number, item in enumerate(items, 1)]


def _prediction(number: int, line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        return _bad_row(number, f"not JSON: {exc}")
    return row if isinstance(row, dict) else _bad_row(number, f"not a JSON object ({type(row).__name__})")


def _bad_row(number: int, reason: str) -> dict[str, Any]:
    return {"instance_id": f"<line {number}>", "error": reason}


def _infrastructure_failed(result: dict[str, Any]) -> bool:
    """An `infra_error` that a new attempt may not repeat (a malformed prediction, graded below as a
    "bad prediction", would repeat it, so its result is kept)."""
    return result.get("status") == "infra_error" and not _bad_prediction(result)


def _bad_prediction(result: dict[str, Any]) -> bool:
    return str(result.get("error")).startswith("bad prediction: ")


def _the_infrastructures(result: dict[str, Any]) -> bool:
    """Whose an error is (`rewards.swebench.CAUSED_BY`); a malformed prediction is the prediction's."""
    return CAUSED_BY.get(result.get("status")) == "infrastructure" and not _bad_prediction(result)


async def grade_prediction(prediction: dict[str, Any], rows: dict[str, dict[str, Any]], reward: SWEBenchReward) -> RewardResult:
    """The grade of one prediction; never raises (errors become an `infra_error` result)."""
    instance_id = str(prediction.get("instance_id"))
    patch = prediction.get("model_patch")
    if prediction.get("error") or instance_id not in rows or not isinstance(patch, (str, type(None))):
        reason = prediction.get("error") or (f"unknown instance {instance_id}" if instance_id not in rows else "model_patch is not a string")
        return RewardResult(instance_id, "infra_error", error=f"bad prediction: {reason}")
    if not (patch or "").strip():
        return RewardResult(instance_id, "unresolved", error=EMPTY_PATCH)
    try:
        return await reward.grade_patch(rows[instance_id], patch)
    except Exception as exc:  # noqa: BLE001 - boundary: one instance's failure is its own row
        logger.warning("grading %s failed: %s", instance_id, exc)
        return RewardResult(instance_id, "infra_error", patch=patch, error=f"{type(exc).__name__}: {exc}")


def summary_report(predictions: list[dict[str, Any]], results: dict[str, dict[str, Any]], dataset_size: int) -> dict[str, Any]:
    """The official harness's run report (schema_version 2)."""
    submitted = sorted(str(p.get("instance_id")) for p in predictions)
    empty = sorted(i for i, r in results.items() if r.get("error") == EMPTY_PATCH)
    resolved = sorted(i for i, r in results.items() if r["status"] == "resolved")
    errors = sorted(i for i, r in results.items() if r["status"] in ERROR_STATUSES)
    unresolved = sorted(i for i, r in results.items() if r["status"] == "unresolved" and i not in empty)
    completed = sorted(resolved + unresolved)
    return {
        "total_instances": dataset_size,
        "submitted_instances": len(submitted),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "completed_ids": completed,
        "incomplete_ids": sorted(set(submitted) - set(results)),
        "empty_patch_ids": empty,
        "submitted_ids": submitted,
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "error_ids": errors,
        "infrastructure_error_ids": sorted(i for i in errors if _the_infrastructures(results[i])),
        "patch_error_ids": sorted(i for i in errors if not _the_infrastructures(results[i])),
        "schema_version": 2,
    }


async def grade_predictions(
    predictions: list[dict[str, Any]],
    rows: dict[str, dict[str, Any]],
    reward: SWEBenchReward,
    output_dir: Path,
    run_id: str,
    *,
    workers: int = 1,
    retry_errors: bool = True,
    on_result: Callable[[dict[str, Any]], None] = lambda result: None,
) -> tuple[dict[str, Any], Path]:
    """Grade every prediction (at most `workers` at once), reusing reports on disk except, with
    `retry_errors`, those of an infrastructure failure; (summary, its path)."""
    run_dir = output_dir / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    paths = {str(p.get("instance_id")): run_dir / f"{str(p.get('instance_id')).replace('/', '_')}.json" for p in predictions}
    pending, retried = to_redo(paths, _infrastructure_failed if retry_errors else None)
    results: dict[str, dict[str, Any]] = {}
    limit = asyncio.Semaphore(workers)

    async def one(prediction: dict[str, Any]) -> None:
        instance_id = str(prediction.get("instance_id"))
        path = paths[instance_id]
        if instance_id not in pending:
            result = read_record(path)
        else:
            async with limit:
                result = (await grade_prediction(prediction, rows, reward)).to_dict()
            result["model_name_or_path"] = prediction.get("model_name_or_path")
            result["language"] = language_of(rows[instance_id]) if instance_id in rows else None
            write_record(path, keep_earlier_errors(result, path))
        results[instance_id] = result
        on_result(result)

    await asyncio.gather(*(one(prediction) for prediction in predictions))
    model = str(predictions[0].get("model_name_or_path") or "model").replace("/", "__") if predictions else "model"
    summary = {**summary_report(predictions, results, len(rows)), "retried_instances": len(retried), "retried_ids": sorted(retried)}
    summary_path = output_dir / f"{model}.{run_id}.json"
    summary_path.write_text(json.dumps(summary, indent=1))
    return summary, summary_path
