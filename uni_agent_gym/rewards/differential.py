"""The differential check of a resolved patch against gold (`reward.differential`): a 1.0 whose run did not pass a
test that gold's run passes is suspect.

A task's listed tests can accept a wrong fix (a special case, half of the fix), and RL teaches what earns 1.0. The
graded run already runs more than the listed tests: the row's test command names test files (swebench's rule: the
files of the test patch; a unittest or Django test module), every test in them runs, and the log gives each one's
outcome (`RewardResult.parsed_statuses`). So after a grading that resolved, those outcomes are compared with gold's
run of the same task: a test that passed with gold and did not pass with the patch (failed, errored, skipped, or
missing from the log) marks the 1.0 suspect, with the tests named. `resolved` and the reward stay as graded: a run
may down-weight or drop a suspect one (`report["differential"]["suspect"]`).

Gold's outcomes come from grading its patch (`datasets.gold_patch`) through the same reward path as the agent's (a
fresh sandbox, the canaries, the guard, the log checks), so the outcomes compared on both sides are vouched for by
the same guard: every test a log passes must be one the guard saw pass, listed or not, and a policy cannot forge the
unlisted tests it is compared on. They are graded once per row and environment and kept on disk under
`env.cache_dir/differential/`, keyed by the row's digest (`workspaces/validated.row_digest`: what grading reads of
it) and the image id (the start commit where there is no image); one process grades them while the others wait. A
grading of gold itself (`validate`'s) fills the cache at no cost.

SWE-bench's rows list nearly every test of their graded files (PASS_TO_PASS is every test that passed before and
after), so there the comparison reaches little beyond them. `reward.differential_modules` adds a second run: the test
files that import the modules gold changes (`module_tests.py`), after the row's own, with its runner, graded as the
agent's patch is, those files returned to the start first (a patch may not rewrite the tests it is compared on); gold's
run of them is made once and cached beside its outcomes. It costs a second grading per resolved patch.

What it cannot see: a wrong fix that no test of the files run tells apart (the weak toy's `WRONG_REMAINDER_TO_FIRST`
with the to_cents fix), and, for other languages than Python, the tests of the changed code outside the row's command.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uni_agent_gym.datasets import Task, gold_patch
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.rewards import module_tests
from uni_agent_gym.workspaces.validated import row_digest

if TYPE_CHECKING:
    from uni_agent_gym.rewards.swebench import RewardResult, SWEBenchReward

DIRECTORY = "differential"
MAX_MODULE_TEST_FILES = 20  # test files of the changed modules run at most (the first by path): a bound on the second run


def gold_key(task: Task, result: RewardResult) -> str:
    """The row as grading reads it, in the environment `result` ran in: its image, else its start commit."""
    where = result.image_id or (f"commit-{result.start_commit}" if result.start_commit else "unknown")
    return f"{row_digest(task)}@{where.replace(':', '-')}"


def cache_path(cache_dir: str | Path, key: str) -> Path:
    return Path(cache_dir).expanduser() / DIRECTORY / f"{key}.json"


def not_passed(agent: dict[str, str], gold: dict[str, str]) -> dict[str, str]:
    """{test: its outcome with the agent's patch ("missing": not in the log)} of the tests gold's run passed and the
    agent's did not."""
    return {test: agent.get(test, "missing") for test, status in sorted(gold.items()) if status == "PASSED" and agent.get(test) != "PASSED"}


async def check(reward: SWEBenchReward, task: Task, result: RewardResult) -> dict[str, Any] | None:
    """The differential part of `result`'s report: None where the check is off or the run did not resolve; else
    `suspect`, the `tests` gold's run passed and this one did not (with their `outcomes`), how many tests were
    `compared` (of them `unlisted`: not graded by the row), where gold's outcomes came from (`gold`: cached, graded,
    or this grading, which was gold's), the second run's part (`modules`, with `differential_modules`) and its
    `seconds`. A gold that could not be graded gives `suspect: None` and the `error`: the agent's grading stands."""
    if not reward.config.differential or not result.resolved:
        return None
    started = time.monotonic()
    try:
        gold, source = await gold_outcomes(reward, task, result)
    except UniAgentGymError as exc:
        return {"suspect": None, "error": str(exc), "seconds": round(time.monotonic() - started, 3)}
    failed = not_passed(result.parsed_statuses, gold)
    listed = set(task.FAIL_TO_PASS) | set(task.PASS_TO_PASS)
    passed_with_gold = [test for test, status in gold.items() if status == "PASSED"]
    report = {"suspect": bool(failed), "tests": list(failed), "outcomes": failed, "compared": len(passed_with_gold),
              "unlisted": sum(test not in listed for test in passed_with_gold), "gold": source}  # fmt: skip
    if reward.config.differential_modules:
        try:
            report["modules"] = modules = await modules_run(reward, task, result, set(gold))
        except UniAgentGymError as exc:
            report["modules"] = modules = {"error": str(exc)}
        report["outcomes"] = failed = {**failed, **modules.get("outcomes", {})}
        report["tests"] = sorted(failed)
        report["suspect"] = bool(failed) or bool(modules.get("problems"))
    report["seconds"] = round(time.monotonic() - started, 3)
    return report


class GoldUnusable(UniAgentGymError):
    """Gold's own grading gives nothing to compare with (it did not reach the tests, or did not resolve)."""


async def gold_outcomes(reward: SWEBenchReward, task: Task, result: RewardResult) -> tuple[dict[str, str], str]:
    """Every outcome of gold's run of `task` in `result`'s environment, and where it came from: the cache; `result`
    itself where it is gold's grading (validate's); else gold graded now, once per machine (a lock per key; the
    others wait, then read the file). Raises `GoldUnusable` where gold did not resolve (remembered where its tests
    ran, so a broken task costs one gold grading), or `DeploymentError` where gold's sandbox failed (tried again)."""
    key = gold_key(task, result)
    path = cache_path(reward.gym.env.cache_dir, key)
    if (cached := _read(path)) is not None:
        return cached, "cached"
    async with machine_lock(f"differential gold {path.resolve()}"):
        if (cached := _read(path)) is not None:
            return cached, "cached"
        gold = gold_patch(task)
        source = "this grading"
        if result.patch != gold:
            source = "graded"
            alone = type(reward)(reward.config.model_copy(update={"differential": False}), reward.environments, reward.gym)
            result = await alone.grade_patch(task, gold)
        if gold_key(task, result) != key:
            raise GoldUnusable(f"gold of {task.instance_id} was graded in another environment ({gold_key(task, result)}) than the patch ({key})")
        record = {"key": key, "instance_id": task.instance_id, "seconds": result.durations.get("total"), "when": time.time()}
        if not result.resolved:  # remembered where it is the task's verdict (its tests ran), not a sandbox's accident
            problems = "; ".join(result.integrity_problems[:3]) or (result.error or "")[-300:]
            error = f"gold's own grading of {task.instance_id} is {result.status}, so there is nothing to compare with: {problems}"
            if result.status == "unresolved" and result.stopped_at is None:
                _write(path, {**record, "error": error})
            raise GoldUnusable(error)
        _write(path, {**record, "statuses": result.parsed_statuses})
        return dict(result.parsed_statuses), source


async def modules_run(reward: SWEBenchReward, task: Task, result: RewardResult, compared: set[str]) -> dict[str, Any]:
    """The second run (`reward.differential_modules`): the test files that import the modules gold changes
    (`module_tests.py`), run after the row's own with the same runner, graded as the agent's patch is (a fresh sandbox,
    those files reset to the start, canaries, guard); gold's run of them is made once per task and cached beside its
    outcomes. {"files", "outcomes" (tests gold's run passed and this one did not, beyond those `compared` already),
    "compared", "problems" (the run's integrity problems: a forged verdict), "status", "seconds"}; {"files": [],
    "reason"} where there is nothing to run."""
    started = time.monotonic()
    path = cache_path(reward.gym.env.cache_dir, f"{gold_key(task, result)}.modules")
    found = _read_record(path)
    if found is None:
        async with machine_lock(f"differential gold {path.resolve()}"):
            if (found := _read_record(path)) is None:
                found = await _gold_modules_run(reward, task, result.test_command)
                _write(path, {**found, "instance_id": task.instance_id, "when": time.time()})
    if not found.get("files") or "statuses" not in found:
        return {"files": found.get("files", []), "reason": found.get("reason", "")}
    run = await _with_module_tests(reward, task, found["command"], found["files"]).grade_patch(task, result.patch)
    gold = {test: status for test, status in found["statuses"].items() if test not in compared}
    report = {"files": found["files"], "outcomes": not_passed(run.parsed_statuses, gold) if run.status in ("resolved", "unresolved") else {},
              "compared": sum(status == "PASSED" for status in gold.values()), "problems": run.integrity_problems, "status": run.status}  # fmt: skip
    if run.caused_by == "patch":  # the patch's own failure (a timeout, a crash) in a run gold finished
        report["problems"] = [*run.integrity_problems, f"the run of the changed modules' tests ended {run.status}: {(run.error or '')[-300:]}"]
    elif run.caused_by == "infrastructure":
        report["error"] = f"the run of the changed modules' tests failed ({run.status}): {(run.error or '')[-300:]}"
    report["seconds"] = round(time.monotonic() - started, 3)
    return report


async def _gold_modules_run(reward: SWEBenchReward, task: Task, command: str) -> dict[str, Any]:
    """The test files of the modules gold changes (found in a sandbox at the start state), the command that runs them
    after the row's own, and gold's outcomes of it; or the reason there is no such run."""
    from uni_agent_gym.deployments.pool import release
    from uni_agent_gym.workspaces.start_state import open_task

    runner = module_tests.runner_of(command)
    if runner is None:
        return {"files": [], "reason": f"the row's command names its tests in a way this check does not extend: {command[-200:]}"}
    gold = gold_patch(task)
    episode = await open_task(task, reward.gym, grading=True)
    try:
        files = await module_tests.importing_test_files(episode.deployment, episode.repo_dir, gold)
    finally:
        await release(episode.deployment)
    files = [path for path in files if module_tests.directive(path, runner) not in command.split()][:MAX_MODULE_TEST_FILES]
    if not files:
        return {"files": [], "reason": "no test file beyond the row's own imports a module gold changes"}
    extended = module_tests.command_with(command, files, runner)
    run = await _with_module_tests(reward, task, extended, files).grade_patch(task, gold)
    if run.status not in ("resolved", "unresolved") or run.integrity_problems:
        return {"files": [], "reason": f"gold's run of {len(files)} test file(s) of the modules it changes is {run.status}: "
                                       f"{'; '.join(run.integrity_problems[:2]) or (run.error or '')[-300:]}"}  # fmt: skip
    return {"files": files, "command": extended, "statuses": run.parsed_statuses}


def _with_module_tests(reward: SWEBenchReward, task: Task, command: str, files: list[str]) -> SWEBenchReward:
    """A reward whose test command for `task` is `command` (the environments entry's `test_cmd_as_run`, which every
    other command gives way to) and which returns `files` to the start before the tests, as the test patch's are: a
    patch may not rewrite the tests it is compared on."""
    entry = {**reward.environments.get(task.instance_id, {}), "test_cmd_as_run": command}
    config = reward.config.model_copy(update={"differential": False, "differential_modules": False})
    return type(reward)(config, {**reward.environments, task.instance_id: entry}, reward.gym, also_reset=(*reward.also_reset, *files))


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _read(path: Path) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        raise GoldUnusable(f"{data['error']} (remembered in {path}: `uni-agent-gym validate` says why; remove the file to grade gold again)")
    statuses = data.get("statuses") if isinstance(data, dict) else None
    return statuses if isinstance(statuses, dict) else None


def _write(path: Path, data: dict[str, Any]) -> None:
    """Atomically: a reader sees the whole file or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(f".{os.getpid()}.tmp")
    scratch.write_text(json.dumps(data, indent=1, sort_keys=True))
    scratch.replace(path)
