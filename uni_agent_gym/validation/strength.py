"""A task's test strength: how many wrong variants of its gold patch its tests tell apart from the fix.

The variants (`variants.py`) are graded through the reward as an agent's patch is (the test patch, the runner's files
reset, canaries, the guard, the log cross-checks), one after another in one fresh sandbox returned to its start state
between them (they are the gym's own patches: `SWEBenchReward.grade_patches`). A variant that does not apply, or whose
grading never reached the tests, is skipped; one that still resolves is a **survivor**; strength = killed / tried. A
survivor names the tests its run failed that gold's run passed and the row does not grade: the tests that would make
the task stronger if it graded them.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from uni_agent_gym.datasets import Task
from uni_agent_gym.rewards.swebench import RewardResult, SWEBenchReward
from uni_agent_gym.toolchains import language_of
from uni_agent_gym.validation.variants import OPERATORS, Variant, pick, variants

DEFAULT_VARIANTS = 8
DEFAULT_SECONDS = 900.0
_REACHED_THE_TESTS = ("resolved", "unresolved")


@dataclass
class Strength:
    """One task's strength; `to_dict()` is its part of `validate`'s report."""

    variants: int = 0  # made from the gold patch (before `--variants` picked some)
    tried: int = 0  # graded to a verdict
    killed: int = 0
    skipped: int = 0  # did not apply, never reached the tests, or the time ran out
    strength: float | None = None  # killed / tried (None: nothing tried)
    survivors: list[dict[str, Any]] = field(default_factory=list)  # operator, where, change, patch, equivalent, ungraded_failures
    by_operator: dict[str, dict[str, int]] = field(default_factory=dict)  # operator -> tried, killed
    seconds: float = 0.0

    @property
    def summary(self) -> str:
        """`survivors: k of n`, as reward reports carry it."""
        return f"survivors: {len(self.survivors)} of {self.tried}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "summary": self.summary}


def ungraded_failures(task: Task, variant: RewardResult, gold: RewardResult) -> list[str]:
    """The tests of the variant's run that failed where gold's run passed them and the row does not grade."""
    graded = set(task.FAIL_TO_PASS) | set(task.PASS_TO_PASS)
    return sorted(test for test, status in variant.parsed_statuses.items()
                  if test not in graded and status in ("FAILED", "ERROR") and gold.parsed_statuses.get(test) == "PASSED")  # fmt: skip


async def measure(task: Task, gold_patch: str, gold: RewardResult, reward: SWEBenchReward, *, limit: int = DEFAULT_VARIANTS,
                  seconds: float = DEFAULT_SECONDS) -> Strength:  # fmt: skip
    """The strength of `task`'s tests against at most `limit` variants of `gold_patch`, within `seconds`; `gold` is the
    gold patch's own grading (its outcomes are what a survivor's are compared with)."""
    started = time.monotonic()
    made = variants(gold_patch, language_of(task))
    chosen = pick(made, limit)
    strength = Strength(variants=len(made))
    if not chosen:
        return strength
    graded = await reward.grade_patches(task, [variant.patch for variant in chosen], deadline=started + seconds)
    tried: Counter = Counter()
    killed: Counter = Counter()
    for variant, result in zip(chosen, graded):
        if result is None or result.status not in _REACHED_THE_TESTS or result.stopped_at is not None:
            strength.skipped += 1
            continue
        tried[variant.operator] += 1
        if result.resolved:
            strength.survivors.append(_survivor(task, variant, result, gold))
        else:
            killed[variant.operator] += 1
    strength.tried, strength.killed = sum(tried.values()), sum(killed.values())
    strength.strength = round(strength.killed / strength.tried, 3) if strength.tried else None
    strength.by_operator = {operator: {"tried": tried[operator], "killed": killed[operator]} for operator in OPERATORS if tried[operator]}
    strength.seconds = round(time.monotonic() - started, 1)
    return strength


def killing_tests(found: Strength, base: RewardResult) -> dict[str, list[str]]:
    """The tests that kill this task's survivors, by the list a row would carry them in: FAIL_TO_PASS where the run
    without the fix (`base`: the test patch alone) did not pass them, else PASS_TO_PASS."""
    tests = sorted({test for survivor in found.survivors for test in survivor["ungraded_failures"]})
    return {"FAIL_TO_PASS": [test for test in tests if base.parsed_statuses.get(test) != "PASSED"],
            "PASS_TO_PASS": [test for test in tests if base.parsed_statuses.get(test) == "PASSED"]}  # fmt: skip


def _survivor(task: Task, variant: Variant, result: RewardResult, gold: RewardResult) -> dict[str, Any]:
    return {"operator": variant.operator, "where": variant.where, "change": variant.change, "patch": variant.patch,
            "equivalent": variant.equivalent, "ungraded_failures": ungraded_failures(task, result, gold)}  # fmt: skip
