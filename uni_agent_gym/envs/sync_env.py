"""`SWEEnv`: the synchronous Gymnasium facade over `AsyncSWEEnv`.

It owns one event loop on a background thread and forwards each call to it; it adds no logic.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import gymnasium

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
        instances: list[dict] | None = None,
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
