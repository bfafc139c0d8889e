"""The share of a training step's trajectories the gym masked, per cause, among verl's data metrics.

verl has no hook for a metric of one's own: its trainers log what `compute_data_metrics` returns (the PPO
trainer, and the separated trainer that the fully-async one runs, each call it once per step on the batch).
The batch's non-tensor columns hold every agent loop's `extra_fields`, so `traj_masked` and
`traj_exit_reason` are there; `with_masked_share` wraps verl's function to add, when they are:

    uni_agent_gym/masked/share        masked trajectories / trajectories in the step
    uni_agent_gym/masked/<cause>      those masked for <cause> / trajectories (env_error, aborted, timeout
                                      always; any other cause a loop masks, e.g. the gateway's harness_error)

The names hold no `min`/`max`/`sum`/`total`, so verl's fully-async aggregator averages them over the steps
of a weight sync. A batch without the columns (another agent loop, the v1 trainer's metrics batch) adds nothing.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

PREFIX = "uni_agent_gym/masked"
CAUSES = ("env_error", "aborted", "timeout")  # UniAgentLoop's abnormal exits, logged even at 0 so a chart has every step
WRAPPED = "__uni_agent_gym_masked_share__"


def masked_share(non_tensor_batch: dict[str, Any]) -> dict[str, float]:
    """The metrics above from a batch's non-tensor columns; {} without `traj_masked`."""
    if "traj_masked" not in non_tensor_batch or not len(non_tensor_batch["traj_masked"]):
        return {}
    masked = np.array([bool(value) for value in non_tensor_batch["traj_masked"]])  # None: a row of another loop
    reasons = np.array([str(reason) for reason in non_tensor_batch.get("traj_exit_reason", [None] * len(masked))])
    metrics = {f"{PREFIX}/share": float(masked.mean())}
    for cause in sorted(set(CAUSES) | set(reasons[masked].tolist())):
        metrics[f"{PREFIX}/{cause}"] = float((masked & (reasons == cause)).mean())
    return metrics


def with_masked_share(compute_data_metrics: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """verl's `compute_data_metrics(batch, ...)` plus `masked_share` of the batch."""
    if getattr(compute_data_metrics, WRAPPED, False):
        return compute_data_metrics

    @functools.wraps(compute_data_metrics)
    def wrapped(batch: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**compute_data_metrics(batch, *args, **kwargs), **masked_share(batch.non_tensor_batch)}

    setattr(wrapped, WRAPPED, True)
    return wrapped
