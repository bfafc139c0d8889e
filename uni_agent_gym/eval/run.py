"""`uni-agent-gym eval`: the ReAct agent over SWE-bench instances, concurrently, resumably.

For each instance: a fresh env, one episode, its trajectory (`trajectories/<id>.json`) and reward
report (`results/<id>.json`) written as soon as it ends; `predictions.jsonl` (the official harness's
format) and the report are rewritten from everything on disk after each instance. A re-run skips
instances that have a trajectory, except those that ended in `env_error` (the sandbox failed, not
the model), which it plays again unless `retry_errors` is off. A sandbox failure costs only its
instance; a model error that no retry fixes (refused key, wrong URL) stops the run. On Ctrl-C every
sandbox is released and finished instances are kept.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uni_agent_gym.agent.model import ChatModel, ModelError, normalise_base_url
from uni_agent_gym.agent.react import run_episode
from uni_agent_gym.config import GymConfig, ModelConfig
from uni_agent_gym.datasets import Task
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.eval.records import keep_earlier_errors, read_record, to_redo, write_record
from uni_agent_gym.eval.report import build_report, write_report
from uni_agent_gym.rewards.swebench import SWEBenchReward
from uni_agent_gym.toolchains import language_of

logger = logging.getLogger(__name__)


class NothingGraded(UniAgentGymError):
    """Every instance of a run ended without a verdict: the run is a failure, whatever its files say."""


def check_graded(report: dict[str, Any]) -> None:
    """`NothingGraded` when instances were played and none was graded, naming the first one's failure."""
    if not report["instances"] or report["graded"]:
        return
    first, reason = next(iter(report["ungraded"].items()))
    how = ("ended in env_error before grading (their sandbox failed)" if set(report["exit_reasons"]) == {"env_error"}
           else "ended without a verdict (their sandbox, or their grading's infrastructure, failed)")  # fmt: skip
    raise NothingGraded(f"nothing was graded: all {report['instances']} instance(s) {how}, the first ({first}): {reason}")


class OtherModel(UniAgentGymError):
    """A resume whose model is not the one whose results the output directory holds: one run, one model."""


# what a run records of its model (run.json), so that a resume with another model is refused
RUN_RECORD = "run.json"


def model_identity(model: ModelConfig) -> dict[str, str]:
    """The model as a run records it: its name, its endpoint and a digest of the settings that change its
    answers (sampling, tool calls, prices for the cost budget; not the key, timeout or retries)."""
    settings = model.model_dump(mode="json", exclude={"api_key", "base_url", "model_name", "timeout", "max_retries"})
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]
    return {"model_name": model.model_name, "base_url": normalise_base_url(model.base_url), "settings_digest": digest}


def _same_model(a: dict[str, str], b: dict[str, str]) -> bool:
    return (a["model_name"], a["settings_digest"]) == (b["model_name"], b["settings_digest"])


def _shown(identity: dict[str, str]) -> str:
    return f"{identity['model_name']} at {identity['base_url']} (settings {identity['settings_digest']})"


def record_model(output_dir: Path, model: ModelConfig, allow_model_change: bool = False) -> list[dict[str, str]]:
    """Record `model` in `run.json` and return the run's models. `OtherModel` when the directory holds results
    of another model (another name or settings), unless `allow_model_change`: then both are recorded, and the
    report and summary say so. The same model served at another endpoint (a restarted server) is the same model:
    its new endpoint is recorded."""
    this = model_identity(model)
    models = (read_record(output_dir / RUN_RECORD) or {}).get("models", [])
    if not any((output_dir / "trajectories").glob("*.json")):
        models = []  # no result of any model yet: nothing to mix
    models = [this if _same_model(identity, this) else identity for identity in models]
    others = [identity for identity in models if identity != this]
    if others and not allow_model_change:
        raise OtherModel(f"{output_dir} holds results of {_shown(others[0])}; this run's model is {_shown(this)}: "
                         "use another --output, or --allow-model-change to add its results to the same run")  # fmt: skip
    if this not in models:
        models = [*models, this]
    if models != (read_record(output_dir / RUN_RECORD) or {}).get("models"):
        output_dir.mkdir(parents=True, exist_ok=True)
        write_record(output_dir / RUN_RECORD, {"models": models})
    return models


def _name(instance_id: str) -> str:
    return instance_id.replace("/", "_") + ".json"


def trajectory_path(output_dir: Path, instance_id: str) -> Path:
    """Where an instance's trajectory goes; its existence marks the instance as done."""
    return output_dir / "trajectories" / _name(instance_id)


def _sandbox_failed(trajectory: dict[str, Any]) -> bool:
    return trajectory.get("exit_reason") == "env_error"


def pending_instances(
    instances: list[Task], output_dir: Path, retry_errors: bool = True
) -> tuple[list[Task], list[Task]]:
    """(instances to play, those of them retried because their sandbox failed on an earlier run)."""
    by_id = {instance.instance_id: instance for instance in instances}
    paths = {instance_id: trajectory_path(output_dir, instance_id) for instance_id in by_id}
    pending, retried = to_redo(paths, _sandbox_failed if retry_errors else None)
    return [by_id[i] for i in pending], [by_id[i] for i in retried]


def finished_trajectories(instances: list[Task], output_dir: Path, retry_errors: bool = True) -> list[dict[str, Any]]:
    """The trajectories of the instances a run skips (done on an earlier run), which its counts start from."""
    pending = {instance.instance_id for instance in pending_instances(instances, output_dir, retry_errors)[0]}
    records = (read_record(trajectory_path(output_dir, i.instance_id)) for i in instances if i.instance_id not in pending)
    return [record for record in records if record is not None]


def summary_line(report: dict[str, Any]) -> str:
    """The resolved rate over the graded instances; those not graded are counted apart, by reason (the
    exception's type, or the grading's status), never as unresolved. Mixed models are named."""
    line = f"resolved {report['resolved']} / {report['graded']}"
    if report["ungraded"]:
        reasons = Counter(reason.split(":")[0] for reason in report["ungraded"].values())
        why = ", ".join(f"{count} {reason}" for reason, count in reasons.most_common())
        line += (f" graded ({report['resolved_rate']:.1%}); {len(report['ungraded'])} of {report['instances']} "
                 f"not graded ({why}; listed in report.md)")  # fmt: skip
    else:
        line += f" ({report['resolved_rate']:.1%})"
    strong = report.get("by_strength", {}).get("no_survivor")
    if strong and strong["graded"]:
        line += f"; over the tasks with no survivor {strong['resolved']} / {strong['graded']} ({strong['resolved_rate']:.1%})"
    if report["retried"]:
        line += f"; retried {report['retried']} whose sandbox failed before"
    if len(report.get("models", [])) > 1:
        line += f"; results of {len(report['models'])} models: " + ", ".join(_shown(identity) for identity in report["models"])
    return line


async def _episode(instance: Task, config: GymConfig, model: ChatModel, reward: SWEBenchReward) -> dict[str, Any]:
    env = AsyncSWEEnv(config, reward=reward)
    started = time.monotonic()
    try:
        return await run_episode(env, model, instance, config.agent)
    except ModelError:
        raise
    except Exception as exc:  # noqa: BLE001 - boundary: one instance's failure is its own row
        error = _described(exc)
        # the gym's own errors say what went wrong; anything else is a bug somewhere, and its traceback says where
        logger.warning("episode of %s failed: %s", instance.instance_id, error, exc_info=not isinstance(exc, UniAgentGymError))
        return {
            "instance_id": instance.instance_id, "model_name_or_path": config.model.model_name, "exit_reason": "env_error",
            "error": error, "reward": 0.0, "resolved": False, "patch": "", "turns": env.turn,
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0, "model_seconds": 0.0, "retries": 0},
            "seconds": time.monotonic() - started, "messages": [], "steps": [], "reward_report": None,
        }  # fmt: skip
    finally:
        await env.close()


def _described(exc: BaseException) -> str:
    """`Type: message`. An exception group's own message ("unhandled errors in a TaskGroup (1 sub-exception)") names
    none of its causes, so they follow it, each described so."""
    text = f"{type(exc).__name__}: {exc}"
    inner = getattr(exc, "exceptions", None)  # a group's: BaseExceptionGroup from Python 3.11, its backport before
    if isinstance(inner, tuple) and inner and all(isinstance(each, BaseException) for each in inner):
        text += " [" + "; ".join(_described(each) for each in inner) + "]"
    return text


def write_outputs(output_dir: Path, instances: list[Task], retried: int = 0) -> dict[str, Any]:
    """predictions.jsonl and the report, from the trajectories on disk (of these instances)."""
    trajectories = [t for t in (read_record(trajectory_path(output_dir, i.instance_id)) for i in instances) if t is not None]
    predictions = [
        {"instance_id": t["instance_id"], "model_name_or_path": t["model_name_or_path"], "model_patch": t["patch"]}
        for t in trajectories
    ]
    (output_dir / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    languages = {instance.instance_id: language_of(instance) for instance in instances}
    report = build_report(trajectories, {instance.instance_id: instance.repo for instance in instances}, retried, languages)
    report["models"] = (read_record(output_dir / RUN_RECORD) or {}).get("models", [])
    write_report(report, output_dir)
    return report


async def run_eval(
    instances: list[Task],
    config: GymConfig,
    output_dir: Path,
    *,
    workers: int = 1,
    retry_errors: bool = True,
    allow_model_change: bool = False,
    on_done: Callable[[dict[str, Any]], None] = lambda trajectory: None,
) -> dict[str, Any]:
    """Run every instance without a trajectory yet (or, with `retry_errors`, whose sandbox failed last
    time); return the report over all of them, with how many were retried. A directory that holds
    another model's results is refused (`OtherModel`) unless `allow_model_change`."""
    record_model(output_dir, config.model, allow_model_change)
    for sub in ("trajectories", "results"):
        (output_dir / sub).mkdir(parents=True, exist_ok=True)
    pending, retried = pending_instances(instances, output_dir, retry_errors)
    model = ChatModel(config.model)
    reward = SWEBenchReward.from_config(config)
    limit = asyncio.Semaphore(workers)

    async def one(instance: Task) -> None:
        async with limit:
            trajectory = await _episode(instance, config, model, reward)
        trajectory.update(repo=instance.repo, language=language_of(instance))  # what the viewer groups and filters by
        path = trajectory_path(output_dir, instance.instance_id)
        write_record(output_dir / "results" / path.name, trajectory["reward_report"])
        write_record(path, keep_earlier_errors(trajectory, path))
        write_outputs(output_dir, instances, len(retried))
        on_done(trajectory)

    try:
        tasks = [asyncio.create_task(one(instance)) for instance in pending]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)  # every env closes in its finally
            raise
    finally:
        await model.close()
    return write_outputs(output_dir, instances, len(retried))
