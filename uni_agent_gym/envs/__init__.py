"""The Gymnasium env over SWE-bench: `AsyncSWEEnv` (the core) and `SWEEnv` (the sync facade)."""

from __future__ import annotations

from uni_agent_gym.envs.async_env import AsyncSWEEnv, ResetNeeded
from uni_agent_gym.envs.reward import CommandReward, Reward
from uni_agent_gym.envs.sync_env import SWEEnv

__all__ = ["AsyncSWEEnv", "CommandReward", "ResetNeeded", "Reward", "SWEEnv"]
