"""How much of a training step's reward came from tasks whose tests accept a wrong fix, among verl's data metrics.

`validate --variants` measures each task's tests against wrong variants of its gold patch; a task with survivors
rewards some wrong fixes 1.0, and a policy that learns them is reward hacking. The agent loops put the task's number
of survivors (`SURVIVORS`: from the reward report's `strength`, else the row's `extra_info.strength`; None where not
measured) into `extra_fields`, which verl's batch holds as a non-tensor column; `with_survivor_share` wraps verl's
`compute_data_metrics` (as `masked_share` does) to add, when the column is there:

    uni_agent_gym/survivors/positive_share    positive rewards from tasks with survivors / positive rewards (left out
                                              of a step with no positive reward: there it says nothing)
    uni_agent_gym/survivors/task_share        trajectories of tasks with survivors / trajectories (what the first
                                              would be if weak tasks were solved as often as the others)
    uni_agent_gym/survivors/unmeasured_share  trajectories whose task's strength was not measured / trajectories

A positive share rising above the task share says the policy earns its rewards more and more where the tests are
weak. The names hold no `min`/`max`/`sum`/`total`, so verl's fully-async aggregator averages them over a weight sync.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

PREFIX = "uni_agent_gym/survivors"
SURVIVORS = "task_survivors"  # the extra_fields key (verl's non-tensor column) the agent loops fill
WRAPPED = "__uni_agent_gym_survivor_share__"


def survivor_share(scores: np.ndarray, non_tensor_batch: dict[str, Any]) -> dict[str, float]:
    """The metrics above from each trajectory's score (its reward) and the batch's non-tensor columns; {} without
    `SURVIVORS` (another agent loop's batch)."""
    if SURVIVORS not in non_tensor_batch or not len(non_tensor_batch[SURVIVORS]):
        return {}
    counts = list(non_tensor_batch[SURVIVORS])
    weak = np.array([bool(count) for count in counts])  # None (not measured) and 0 are not weak
    unmeasured = np.array([count is None for count in counts])
    positive = np.asarray(scores, dtype=float) > 0
    metrics = {f"{PREFIX}/task_share": float(weak.mean()), f"{PREFIX}/unmeasured_share": float(unmeasured.mean())}
    if positive.any():
        metrics[f"{PREFIX}/positive_share"] = float((positive & weak).sum() / positive.sum())
    return metrics


def with_survivor_share(compute_data_metrics: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """verl's `compute_data_metrics(batch, ...)` plus `survivor_share` of the batch (its scores: `token_level_scores`
    summed over the response, the reward as verl's own `critic/score` reads it)."""
    if getattr(compute_data_metrics, WRAPPED, False):
        return compute_data_metrics

    @functools.wraps(compute_data_metrics)
    def wrapped(batch: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        metrics = compute_data_metrics(batch, *args, **kwargs)
        if SURVIVORS not in batch.non_tensor_batch or "token_level_scores" not in batch.batch.keys():
            return metrics
        scores = batch.batch["token_level_scores"].sum(-1).detach().float().cpu().numpy()
        return {**metrics, **survivor_share(scores, batch.non_tensor_batch)}

    setattr(wrapped, WRAPPED, True)
    return wrapped
