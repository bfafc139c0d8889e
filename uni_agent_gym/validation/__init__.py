"""`uni-agent-gym validate`: the gold self-check of a dataset's tasks in the sandboxes grading will use.

Each task is graded three times, in fresh sandboxes of the configured deployment: its gold patch (`datasets.gold_patch`:
SWE-smith's is its bug's diff reversed) must resolve (every
FAIL_TO_PASS and PASS_TO_PASS test passes), its test patch alone (a patch that changes nothing the tests read) must
not (no FAIL_TO_PASS test passes at the base, and the runner starts), and the empty patch earns 0. A task that fails
says why (`REASONS`). The result is remembered per environment on this machine (`workspaces/validated.py`): grading in
a validated environment calls a runner that never started the patch's doing (the zero rule in `rewards/swebench.py`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from uni_agent_gym.datasets import Task, gold_patch
from uni_agent_gym.diffs import IrreversibleDiff
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.eval.grade import grade_prediction
from uni_agent_gym.rewards.swebench import EMPTY_PATCH, RewardResult, SWEBenchReward
from uni_agent_gym.toolchains import language_of
from uni_agent_gym.validation import strength
from uni_agent_gym.validation.strength import DEFAULT_SECONDS
from uni_agent_gym.workspaces.validated import record, row_digest

# A patch that changes no file the tests read: graded, the tests run on the base code with the test patch alone.
TEST_PATCH_ALONE = (
    "diff --git a/UNI_AGENT_GYM_VALIDATE.txt b/UNI_AGENT_GYM_VALIDATE.txt\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/UNI_AGENT_GYM_VALIDATE.txt\n@@ -0,0 +1 @@\n+the test patch alone\n"
)
REASONS = {
    "gold": "gold not resolved",
    "base": "FAIL_TO_PASS passes at the base",
    "started": "the tests never started",
    "test_patch": "test patch does not apply",
    "build": "build fails",
    "sandbox": "no sandbox",
    "empty": "the empty patch earns a reward",
}


class ValidationFailed(UniAgentGymError):
    """A task failed its self-check (or a row made no task): the run exits non-zero, the report says why."""


@dataclass
class Validation:
    """One task's self-check; `to_dict()` is its row of the JSON report."""

    instance_id: str
    language: str | None
    validated: bool
    reasons: list[str] = field(default_factory=list)  # "<kind>: <detail>", kinds as in REASONS
    environment: str | None = None  # the environment digest its image records (None: an image not built here)
    image_id: str | None = None
    remembered: bool = False  # whether this machine now knows the environment's result (an image built here)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # gold / test patch alone / empty: status, reward, exit code
    seconds: float = 0.0
    row_digest: str = ""  # what grading reads of the row (`workspaces/validated.py`): the verdict is this row's
    strength: dict[str, Any] | None = None  # its tests against wrong variants of its gold (`strength.py`); None: not measured

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _tail(text: str | None, size: int = 300) -> str:
    text = (text or "").strip()
    return text if len(text) <= size else "..." + text[-size:]


def _run_problem(result: RewardResult) -> str | None:
    """Why a run says nothing about the tests (it never got to them), or None."""
    error = result.error or ""
    if result.stopped_at == "test_patch":
        return f"test_patch: {_tail(error)}"
    if result.stopped_at == "build":
        return f"build: {_tail(error)}"
    if result.stopped_at == "not_started":
        return f"started: exit code {result.exit_code}: {_tail(error)}"
    if result.status == "infra_error":
        return f"sandbox: {_tail(error)}"
    return None


def reasons_of(task: Task, gold: RewardResult, alone: RewardResult, empty: RewardResult) -> list[str]:
    """Why a task fails its self-check (empty: it validated)."""
    reasons: list[str] = []
    for result in (gold, alone):
        problem = _run_problem(result)
        if problem and problem not in reasons:
            reasons.append(problem)
    if not reasons and gold.status != "resolved":
        failing = sorted(test for test, status in gold.test_statuses.items() if status != "PASSED")
        detail = f"{', '.join(failing[:5])}{' ...' if len(failing) > 5 else ''} did not pass" if failing else _tail(gold.error)
        reasons.append(f"gold: {detail}{'; ' + '; '.join(gold.integrity_problems) if gold.integrity_problems else ''}")
    passing = sorted(test for test in task.FAIL_TO_PASS or [] if alone.test_statuses.get(test) == "PASSED")
    if passing or (not reasons and alone.status == "resolved"):
        reasons.append(f"base: {', '.join(passing[:5]) or 'the test patch alone resolves'}")
    if empty.reward != 0.0:
        reasons.append(f"empty: {empty.reward}")
    return reasons


async def validate_task(task: Task, reward: SWEBenchReward, *, variants: int = 0, variant_seconds: float = DEFAULT_SECONDS) -> Validation:
    """The self-check of one task (never raises: a sandbox that fails is its reason); with `variants`, the strength of
    its tests against that many wrong variants of its gold, where the gold validated."""
    started = time.monotonic()
    rows = {task.instance_id: task}

    async def graded(patch: str) -> RewardResult:
        return await grade_prediction({"instance_id": task.instance_id, "model_patch": patch}, rows, reward)

    try:
        fix = gold_patch(task)
    except IrreversibleDiff as exc:
        fix, unreadable = "", f"gold: the row's patch cannot be turned into its fix: {exc}"
    else:
        unreadable = None
    gold = await graded(fix)
    alone = await graded(TEST_PATCH_ALONE)
    empty = await graded("")
    reasons = [unreadable] if unreadable else reasons_of(task, gold, alone, empty)
    runs = {name: {"status": result.status, "reward": result.reward, "exit_code": result.exit_code, "error": _tail(result.error, 1500),
                   "seconds": round(result.durations.get("total", 0.0), 1)}
            for name, result in (("gold", gold), ("test patch alone", alone), ("empty", empty))}  # fmt: skip
    runs["empty"]["graded"] = empty.error != EMPTY_PATCH  # an empty patch is not run, as the official harness does not run one
    environment = gold.environment or alone.environment
    image_id = gold.image_id or alone.image_id
    validation = Validation(task.instance_id, language_of(task), not reasons, reasons, environment, image_id, runs=runs, row_digest=row_digest(task))
    if variants > 0 and validation.validated and not unreadable:
        try:
            measured = await strength.measure(task, fix, gold, reward, limit=variants, seconds=variant_seconds)
            validation.strength = {**measured.to_dict(), "killing_tests": strength.killing_tests(measured, alone)}
        except UniAgentGymError as exc:  # a sandbox that failed: no strength, the verdict stands
            validation.strength = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    if environment and image_id and reward.gym is not None and not any(reason.startswith("sandbox:") for reason in reasons):
        await asyncio.to_thread(record, reward.gym.env.cache_dir, task, environment, image_id, validation.validated, reasons, validation.strength)
        validation.remembered = True
    validation.seconds = round(time.monotonic() - started, 1)
    return validation


async def validate_tasks(
    tasks: list[Task], reward: SWEBenchReward, *, workers: int = 1, on_result: Callable[[Validation], None] = lambda result: None,
    variants: int = 0, variant_seconds: float = DEFAULT_SECONDS,
) -> list[Validation]:
    """Every task's self-check (and strength, with `variants`), `workers` tasks at a time, in the tasks' order."""
    limit = asyncio.Semaphore(max(1, workers))

    async def one(task: Task) -> Validation:
        async with limit:
            result = await validate_task(task, reward, variants=variants, variant_seconds=variant_seconds)
        on_result(result)
        return result

    return list(await asyncio.gather(*(one(task) for task in tasks)))


def table_reason(result: Validation, width: int = 200) -> str:
    """A task's first reason as `validate`'s table shows it: what its kind means, then the last line of its detail (an
    error's most telling one: the exception, the hunk that failed; the report keeps the rest), cut to `width`."""
    if not result.reasons:
        return ""
    kind, _, detail = result.reasons[0].partition(": ")
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    text = f"{REASONS.get(kind, kind)}: {lines[-1] if lines else ''}"
    return text if len(text) <= width else text[: width - 1] + "…"


def summary(results: list[Validation], unloadable: dict[str, str]) -> dict[str, Any]:
    """The JSON report: counts, each task's row, and the rows that made no task."""
    failed = [result for result in results if not result.validated]
    return {
        "tasks": len(results), "validated": len(results) - len(failed), "failed": len(failed),
        "failed_ids": sorted(result.instance_id for result in failed),
        "by_reason": {kind: sorted(r.instance_id for r in failed if any(reason.startswith(kind + ":") for reason in r.reasons))
                      for kind in REASONS if any(reason.startswith(kind + ":") for r in failed for reason in r.reasons)},
        "unloadable": unloadable,
        "strength": strength_summary(results),
        "results": [result.to_dict() for result in results],
    }  # fmt: skip


def strength_summary(results: list[Validation]) -> dict[str, Any]:
    """Over the tasks whose strength was measured: how many have survivors (and how many only survivors suspected
    equivalent to gold), the kills per operator, and the tests that would kill survivors if the rows graded them."""
    measured = [r for r in results if r.strength and r.strength.get("tried")]
    operators: dict[str, dict[str, int]] = {}
    for result in measured:
        for operator, counts in result.strength["by_operator"].items():
            total = operators.setdefault(operator, {"tried": 0, "killed": 0})
            total["tried"], total["killed"] = total["tried"] + counts["tried"], total["killed"] + counts["killed"]
    weak = [r for r in measured if r.strength["survivors"]]
    return {
        "measured": len(measured), "with_survivors": sorted(r.instance_id for r in weak),
        "only_suspected_equivalent": sorted(r.instance_id for r in weak if all(s["equivalent"] for s in r.strength["survivors"])),
        "variants_tried": sum(r.strength["tried"] for r in measured), "variants_survived": sum(len(r.strength["survivors"]) for r in measured),
        "by_operator": operators,
        "ungraded_tests_that_kill": {r.instance_id: sorted({t for s in r.strength["survivors"] for t in s["ungraded_failures"]}) for r in weak
                                     if any(s["ungraded_failures"] for s in r.strength["survivors"])},
    }  # fmt: skip


def strength_cell(result: Validation) -> str:
    """The table's strength: `killed/tried`, with the survivors counted; `-` where not measured."""
    found = result.strength
    if not found:
        return "-"
    if "error" in found:
        return "not measured"
    if not found["tried"]:
        return "no variants" if not found["variants"] else f"0 of {found['variants']} graded"
    survivors = len(found["survivors"])
    return f"{found['killed']}/{found['tried']}" + (f", {survivors} survive" if survivors else "")


def write_strengthened(path: str, tasks: list[Task], results: list[Validation]) -> int:
    """Each task again as a row (JSONL), with the tests that killed its survivors (gold passes them; the row did not grade
    them) added: to FAIL_TO_PASS where they fail without the fix (the test patch alone's run), else to PASS_TO_PASS. A
    stronger row for training. The number of rows changed."""
    import json

    killing = {result.instance_id: (result.strength or {}).get("killing_tests") or {} for result in results}
    changed = 0
    with open(path, "w") as out:
        for task in tasks:
            row = task.to_dict()
            for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
                added = [test for test in killing.get(task.instance_id, {}).get(name, []) if test not in row[name]]
                row[name] = [*row[name], *added]
            changed += row["FAIL_TO_PASS"] != task.FAIL_TO_PASS or row["PASS_TO_PASS"] != task.PASS_TO_PASS
            out.write(json.dumps(row) + "\n")
    return changed
