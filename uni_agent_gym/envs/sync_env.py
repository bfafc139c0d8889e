"""`SWEEnv`: the synchronous Gymnasium facade over `AsyncSWEEnv`.

It owns one event loop on a background thread and forwards each call to it. The one thing it adds is
Gymnasium's: a `TimeLimit` around it (`gymnasium.make(..., max_episode_steps=N)`) is the episode's `max_turns`.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Mapping
from typing import Any

import gymnasium
from gymnasium.wrappers import TimeLimit

from uni_agent_gym.config import GymConfig
from uni_agent_gym.envs.async_env import AsyncSWEEnv
from uni_agent_gym.envs.reward import Reward
from uni_agent_gym.toolcalls import ToolCallFormat


class SWEEnv(gymnasium.Env):
    """A SWE-bench episode as a `gymnasium.Env`; see `AsyncSWEEnv` for the contract of each method."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        config: GymConfig | None = None,
        *,
        instances: list[Mapping[str, Any]] | None = None,
        reward: Reward | None = None,
        tool_format: ToolCallFormat | None = None,
    ) -> None:
        self._env = AsyncSWEEnv(config, instances=instances, reward=reward, tool_format=tool_format)
        self.observation_space = self._env.observation_space
        self.action_space = self._env.action_space
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="uni-agent-gym-env", daemon=True)
        self._thread.start()

    @property
    def async_env(self) -> AsyncSWEEnv:
        return self._env

    @property
    def last_timings(self) -> dict[str, float]:
        """Wall-clock seconds of the last reset or step (kept out of info: see `AsyncSWEEnv.last_timings`)."""
        return self._env.last_timings

    def _wait(self, coroutine) -> Any:
        if self._loop.is_closed():
            coroutine.close()
            raise RuntimeError("SWEEnv is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        limit = time_limit_around(self)
        if limit is not None:
            options = {**(options or {}), "max_turns": min(limit, (options or {}).get("max_turns") or limit)}
        return self._wait(self._env.reset(seed=seed, options=options))

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return self._wait(self._env.step(action))

    def close(self) -> None:
        """Release the sandbox and stop the loop thread; idempotent."""
        if self._loop.is_closed():
            return
        try:
            self._wait(self._env.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            self._loop.close()


def time_limit_around(env: gymnasium.Env) -> int | None:
    """The step limit of the Gymnasium `TimeLimit` wrappers around `env` (the smallest), found among the callers
    of its `reset`, which every wrapper forwards. Gymnasium never tells the env its limit (`make` sets the env's
    `spec.max_episode_steps` to None), and a limit the env does not know truncates the episode after the env
    returned its step ungraded, with reward 0.0: so the env ends the episode itself at that step, graded, as at
    `max_turns`."""
    limits = []
    frame = sys._getframe(1)
    while frame is not None:
        caller = frame.f_locals.get("self")
        if isinstance(caller, TimeLimit) and caller.unwrapped is env:
            limits.append(caller._max_episode_steps)
        frame = frame.f_back
    return min(limits, default=None)
