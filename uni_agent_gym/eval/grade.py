"""`uni-agent-gym grade`: grade a `predictions.jsonl` (the official harness's format) in fresh sandboxes.

Each prediction (`instance_id`, `model_name_or_path`, `model_patch`) gets a new sandbox of its
instance; the patch is applied the harness's way (`git apply`, then `--reject`, then `patch --fuzz`)
and graded by `SWEBenchReward`. One JSON report per instance is written as soon as it is known, so a
re-run skips what is done, except `infra_error`s of the infrastructure, which it grades again unless
`retry_errors` is off; a bad prediction, one for an instance the dataset lacks, a dataset row that makes
no task or a failing sandbox costs only its own row. The summary has the fields of the official
`<model>.<run_id>.json` report, plus how many instances were retried and which got no verdict. The toy
task's predictions are graded by its own tests (`toy.grade_patch`), as its episodes are.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uni_agent_gym import toy
from uni_agent_gym.datasets import Task, instance_id_of
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.eval.records import keep_earlier_errors, read_record, to_redo, write_record
from uni_agent_gym.files import read_text
from uni_agent_gym.instances import normalise
from uni_agent_gym.rewards.swebench import CAUSED_BY, EMPTY_PATCH, RewardResult, SWEBenchReward
from uni_agent_gym.toolchains import language_of

logger = logging.getLogger(__name__)

ERROR_STATUSES = ("patch_failed", "patch_rejected", "test_patch_failed", "timeout", "tests_crashed", "infra_error")


class PredictionsError(UniAgentGymError, ValueError):
    """The predictions file holds nothing to grade (a single bad row is reported for its instance instead)."""


class NoPredictionGraded(UniAgentGymError):
    """No prediction got a verdict: the run is a failure, whatever its files say (as `eval`'s `NothingGraded`)."""


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    """Predictions from a .jsonl file, one JSON object per line with `instance_id` and `model_patch` (or a .json
    list / {id: prediction} mapping of them); a row that is not one is kept as a row without a usable patch, so
    it is reported for its instance (or line) rather than crash the run. A file with no prediction at all
    (missing, empty, not JSON, another file's rows such as a dataset or a report) is a `PredictionsError`."""
    text = read_text(path, "Predictions file", PredictionsError)
    if str(path).endswith(".jsonl"):
        rows = [_line(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PredictionsError(f"Predictions file {path} is not valid JSON: {exc}") from None
        items = list(data.values()) if isinstance(data, dict) else data
        if not isinstance(items, list) or not items:
            raise PredictionsError(f"Predictions file {path}: expects a non-empty JSON list of predictions or a mapping of them by instance id")
        rows = [_prediction(f"<item {number}>", item) for number, item in enumerate(items, 1)]
    if all("error" in row for row in rows):
        shape = "one per line" if str(path).endswith(".jsonl") else "in a list, or a mapping by instance id"
        raise PredictionsError(f"Predictions file {path} holds no prediction (expects JSON objects with instance_id and model_patch, "
                               f"{shape}); {rows[0]['instance_id']}: {rows[0]['error']}")  # fmt: skip
    where: dict[str, list[int]] = {}
    for number, row in enumerate(rows, 1):
        if "error" not in row:
            where.setdefault(row["instance_id"], []).append(number)
    twice = {instance_id: numbers for instance_id, numbers in where.items() if len(numbers) > 1}
    if twice:  # the official harness keys predictions by instance id: the last would silently win
        instance_id, numbers = next(iter(twice.items()))
        raise PredictionsError(f"Predictions file {path} has {len(numbers)} predictions for {instance_id} (rows {', '.join(map(str, numbers))})"
                               f"{f' and for {len(twice) - 1} other instance(s)' if len(twice) > 1 else ''}: one per instance, "
                               "as the official harness keys them; keep the one to grade")  # fmt: skip
    return rows


def _line(number: int, line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"instance_id": f"<line {number}>", "error": f"not JSON: {exc}"}
    return _prediction(f"<line {number}>", row)


def _prediction(where: str, row: Any) -> dict[str, Any]:
    """The row if it is a prediction, else a bad row saying why, under its instance id where it names one."""
    if not isinstance(row, dict):
        return {"instance_id": where, "error": f"not a JSON object ({type(row).__name__})"}
    instance_id = row.get("instance_id")
    if not isinstance(instance_id, str) or not instance_id:
        return {"instance_id": where, "error": f"no instance_id (its keys: {_keys(row)})"}
    if "model_patch" not in row:
        return {"instance_id": instance_id, "error": f"no model_patch (its keys: {_keys(row)})"}
    return row


def _keys(row: dict[str, Any]) -> str:
    names = sorted(map(str, row))
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") if names else "none"


def dataset_tasks(rows: list[dict[str, Any]], dataset_format: str = "auto") -> tuple[dict[str, Task], dict[str, str]]:
    """({instance id: task}, {instance id: why its row makes no task}): a row that does not load costs only the
    predictions for it. A dataset none of whose rows loads raises the first row's error."""
    tasks, unloadable, first = {}, {}, None
    for row in rows:
        try:
            tasks[instance_id_of(row)] = normalise(row, dataset_format)
        except UniAgentGymError as exc:
            unloadable[instance_id_of(row)], first = str(exc), first or exc
    if not tasks and first is not None:
        raise first
    return tasks, unloadable


def _infrastructure_failed(result: dict[str, Any]) -> bool:
    """An `infra_error` that a new attempt may not repeat (a malformed prediction, graded below as a
    "bad prediction", would repeat it, so its result is kept)."""
    return result.get("status") == "infra_error" and not _bad_prediction(result)


BAD_PREDICTION = "bad prediction: "
UNKNOWN_INSTANCE = BAD_PREDICTION + "unknown instance"


def _bad_prediction(result: dict[str, Any]) -> bool:
    return str(result.get("error")).startswith(BAD_PREDICTION)


def _unknown_instance(result: dict[str, Any]) -> bool:
    return str(result.get("error")).startswith(UNKNOWN_INSTANCE)


def _the_infrastructures(result: dict[str, Any]) -> bool:
    """Whose an error is (`rewards.swebench.CAUSED_BY`); a malformed prediction is the prediction's."""
    return CAUSED_BY.get(result.get("status")) == "infrastructure" and not _bad_prediction(result)


def _graded(result: dict[str, Any]) -> bool:
    """Whether a result is a verdict on the patch (resolved, unresolved, empty, or the patch's own error)."""
    return result.get("status") in ("resolved", "unresolved") or (CAUSED_BY.get(result.get("status")) == "patch" and not _bad_prediction(result))


async def grade_prediction(
    prediction: dict[str, Any], rows: dict[str, Task], reward: SWEBenchReward, unloadable: dict[str, str] | None = None
) -> RewardResult:
    """The grade of one prediction; never raises (errors become an `infra_error` result). `unloadable`: the
    dataset's rows that make no task, with why."""
    instance_id = str(prediction.get("instance_id"))
    patch = prediction.get("model_patch")
    if instance_id in (unloadable or {}) and not prediction.get("error"):
        return RewardResult(instance_id, "infra_error", error=f"the dataset's row of {instance_id} makes no task: {unloadable[instance_id]}")
    if prediction.get("error") or instance_id not in rows or not isinstance(patch, (str, type(None))):
        if prediction.get("error") or instance_id in rows:
            return RewardResult(instance_id, "infra_error", error=BAD_PREDICTION + (prediction.get("error") or "model_patch is not a string"))
        return RewardResult(instance_id, "infra_error", error=f"{UNKNOWN_INSTANCE} {instance_id}: the dataset has no such row")
    if not (patch or "").strip():
        return RewardResult(instance_id, "unresolved", error=EMPTY_PATCH)
    try:
        if toy.is_toy(rows[instance_id]):  # graded by its own tests, as its episodes are
            return await toy.grade_patch(rows[instance_id], patch, reward.gym)
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
    bad = [i for i in errors if _bad_prediction(results[i])]
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
        "patch_error_ids": sorted(i for i in errors if not _the_infrastructures(results[i]) and i not in bad),
        "unknown_instance_ids": [i for i in bad if _unknown_instance(results[i])],  # predictions of another dataset?
        "bad_prediction_ids": [i for i in bad if not _unknown_instance(results[i])],  # rows that are not predictions
        "graded_instances": sum(_graded(r) for r in results.values()),
        "ungraded": {i: results[i].get("error") or results[i]["status"] for i in sorted(results) if not _graded(results[i])},
        "schema_version": 2,
    }


def summary_line(summary: dict[str, Any], path: Path) -> str:
    """What `grade` prints at the end: the verdicts, and the errors by whose they are."""
    retried = f", {summary['retried_instances']} retried after an infrastructure error" if summary.get("retried_instances") else ""
    unknown = f", {len(summary['unknown_instance_ids'])} for instances not in the dataset" if summary["unknown_instance_ids"] else ""
    bad = f", {len(summary['bad_prediction_ids'])} not predictions" if summary["bad_prediction_ids"] else ""
    return (
        f"resolved {summary['resolved_instances']} / {summary['submitted_instances']} submitted "
        f"({summary['unresolved_instances']} unresolved, {summary['empty_patch_instances']} empty, "
        f"{summary['error_instances']} errors: {len(summary['patch_error_ids'])} the patch's, "
        f"{len(summary['infrastructure_error_ids'])} the infrastructure's{unknown}{bad}{retried}); report: {path}"
    )


def check_graded(summary: dict[str, Any]) -> None:
    """`NoPredictionGraded` when predictions were submitted and none got a verdict, naming the first's failure."""
    if not summary["submitted_instances"] or summary["graded_instances"]:
        return
    total = summary["submitted_instances"]
    if len(summary["unknown_instance_ids"]) == total:
        raise NoPredictionGraded(f"nothing was graded: all {total} prediction(s) are for instances the dataset does not have "
                                 f"(the first: {summary['unknown_instance_ids'][0]}); are they predictions of another dataset?")  # fmt: skip
    first, reason = next(iter(summary["ungraded"].items()))
    raise NoPredictionGraded(f"nothing was graded: all {total} prediction(s) ended without a verdict, the first ({first}): {reason}")


async def grade_predictions(
    predictions: list[dict[str, Any]],
    rows: dict[str, Task],
    reward: SWEBenchReward,
    output_dir: Path,
    run_id: str,
    *,
    workers: int = 1,
    retry_errors: bool = True,
    on_result: Callable[[dict[str, Any]], None] = lambda result: None,
    unloadable: dict[str, str] | None = None,
) -> tuple[dict[str, Any], Path]:
    """Grade every prediction (at most `workers` at once), reusing reports on disk except, with
    `retry_errors`, those of an infrastructure failure; (summary, its path). `unloadable`: the dataset's
    rows that make no task (`dataset_tasks`)."""
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
                result = (await grade_prediction(prediction, rows, reward, unloadable)).to_dict()
            if _bad_prediction(result):
                result["caused_by"] = "prediction"  # neither the patch's nor the infrastructure's
            result["model_name_or_path"] = prediction.get("model_name_or_path")
            result["language"] = language_of(rows[instance_id]) if instance_id in rows else None
            write_record(path, keep_earlier_errors(result, path))
        results[instance_id] = result
        on_result(result)

    await asyncio.gather(*(one(prediction) for prediction in predictions))
    model = str(predictions[0].get("model_name_or_path") or "model").replace("/", "__") if predictions else "model"
    summary = {**summary_report(predictions, results, len(rows) + len(unloadable or {})), "retried_instances": len(retried), "retried_ids": sorted(retried)}
    summary_path = output_dir / f"{model}.{run_id}.json"
    summary_path.write_text(json.dumps(summary, indent=1))
    return summary, summary_path
