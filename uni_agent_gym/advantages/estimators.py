"""GRPO and RLOO over the trajectories that have a sampled token.

A trajectory the gym masks (`rollout.mask_abnormal_exit_traj`: env_error, aborted, timeout) keeps its row in
the batch with `response_mask` all 0 and reward 0.0. That stops its own gradient, but verl's estimators put
every row of a prompt's group into the group's mean and std, so each infrastructure failure is a fake reward-0
member that shifts the advantage of every real one. These estimators run verl's own function on the rows with
a sampled token and give the others advantage 0: a group's statistics are those of its real members, a group
left with one gets verl's rule for a group of one, a group with none contributes nothing. On a batch with no
masked row they return exactly what verl's estimator returns.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage, compute_rloo_outcome_advantage

GRPO = "grpo_drop_masked"
RLOO = "rloo_drop_masked"
# verl's own estimator -> ours (the line `check-config --training` asks for)
REPLACEMENTS = {"grpo": GRPO, "grpo_vectorized": GRPO, "rloo": RLOO, "rloo_vectorized": RLOO}


def sampled(response_mask: torch.Tensor) -> torch.Tensor:
    """The rows with at least one sampled token (a masked trajectory has none)."""
    return response_mask.bool().any(dim=-1)


def on_sampled_rows(estimator: Callable[..., tuple[torch.Tensor, torch.Tensor]], token_level_rewards: torch.Tensor,
                    response_mask: torch.Tensor, index: np.ndarray, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """verl's `estimator` on the sampled rows alone (so its groups are their real members), 0 on the others;
    (advantages, returns) of verl's shape, as verl's outcome estimators return them (the same tensor)."""
    rows = sampled(response_mask).nonzero(as_tuple=True)[0]
    if len(rows) == len(response_mask):
        return estimator(token_level_rewards=token_level_rewards, response_mask=response_mask, index=index, **kwargs)
    advantages = torch.zeros_like(token_level_rewards)
    if len(rows):
        kept, _ = estimator(token_level_rewards=token_level_rewards[rows], response_mask=response_mask[rows],
                            index=np.asarray(index, dtype=object)[rows.cpu().numpy()], **kwargs)  # fmt: skip
        advantages[rows] = kept.to(advantages.dtype)
    return advantages, advantages


def grpo_drop_masked(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: np.ndarray, epsilon: float = 1e-6,
                     norm_adv_by_std_in_grpo: bool | None = None, config: Any = None, **_: Any) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """verl's GRPO over the sampled rows; with `algorithm.norm_adv_by_std_in_grpo = false`, Dr. GRPO (no std).
    verl's trainer passes a registered estimator the algorithm config, not the flag, so it is read there."""
    if norm_adv_by_std_in_grpo is None:
        norm_adv_by_std_in_grpo = True if config is None else bool(config.get("norm_adv_by_std_in_grpo", True))
    return on_sampled_rows(compute_grpo_outcome_advantage, token_level_rewards, response_mask, index, epsilon=epsilon,
                           norm_adv_by_std_in_grpo=norm_adv_by_std_in_grpo)  # fmt: skip


def rloo_drop_masked(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: np.ndarray, epsilon: float = 1e-6,
                     config: Any = None, **_: Any) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """verl's RLOO over the sampled rows: each real trajectory's baseline is the mean of the other real ones."""
    return on_sampled_rows(compute_rloo_outcome_advantage, token_level_rewards, response_mask, index, epsilon=epsilon, config=config)


ESTIMATORS = {GRPO: grpo_drop_masked, RLOO: rloo_drop_masked}
