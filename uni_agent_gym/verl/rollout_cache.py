"""The rollout cache's first address, kept for users and configs that import it from here (DESIGN.md's
public entry points); it lives in `uni_agent_gym.tokens.rollout_cache`, beside the boundary probe."""

from uni_agent_gym.tokens.rollout_cache import (
    APPENDABLE_ROLES,
    UNKNOWN_VERSION,
    MaxTokenExceededError,
    RolloutCache,
    aborted,
    sampled_versions,
)

__all__ = ["APPENDABLE_ROLES", "UNKNOWN_VERSION", "MaxTokenExceededError", "RolloutCache", "aborted", "sampled_versions"]
