"""uni-agent-gym: a SWE-bench environment and reward gym for agentic reinforcement learning.

    env = uni_agent_gym.make_env(config)            # or gymnasium.make("uni_agent_gym/SWEBench-v0")
    obs, info = env.reset(options={"instance": row})

Importing the package registers the Gymnasium id and loads nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium

__version__ = "0.1.0"
__all__ = ["AsyncSWEEnv", "SWEEnv", "make_env"]

ENV_ID = "uni_agent_gym/SWEBench-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="uni_agent_gym:make_env", disable_env_checker=True)

if TYPE_CHECKING:
    from uni_agent_gym.envs import AsyncSWEEnv, SWEEnv


def make_env(config: Any = None, **kwargs: Any) -> "SWEEnv":
    """A `SWEEnv` from a `GymConfig`, a dict of config sections, or config file paths (a str or list).

    Episodes are graded by `SWEBenchReward` unless `reward=` says otherwise (the toy task brings its own).
    """
    from uni_agent_gym.config import GymConfig, load_config, validate
    from uni_agent_gym.envs import SWEEnv

    if isinstance(config, (str, list, tuple)):
        config = load_config(*([config] if isinstance(config, str) else config))
    elif isinstance(config, dict):
        config = validate(GymConfig, config, "make_env")
    return SWEEnv(config or GymConfig(), **kwargs)


def __getattr__(name: str) -> Any:
    if name in ("AsyncSWEEnv", "SWEEnv"):
        from uni_agent_gym import envs

        return getattr(envs, name)
    raise AttributeError(f"module 'uni_agent_gym' has no attribute {name!r}")
