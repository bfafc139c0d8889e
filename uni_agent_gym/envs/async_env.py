"""`AsyncSWEEnv`: one SWE-bench episode at a time, async-native (the core under `SWEEnv` and verl).

    obs, info = await env.reset(options={"instance": row})        # or {"instance_id": ...}
    obs, reward, terminated, truncated, info = await env.step({"name": "execute_bash", "arguments": {...}})
    obs, ... = await env.step("<tool_call>{...}</tool_call>")       # model text, in env.tool_format
    await env.close()

`terminated` means the agent called `finish`; `truncated` means `max_turns` ran out. Either way the
episode is graded then, and the reward is 0.0 on every other step. A malformed call is an
observation saying what was wrong (`info["error"] == "format_error"`), never an exception; a sandbox
that dies raises `DeploymentError`, so it is never trained on as the agent's mistake.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from uni_agent_gym.config import GymConfig
from uni_agent_gym.datasets import Task
from uni_agent_gym.deployments import Deployment
from uni_agent_gym.deployments.pool import release
from uni_agent_gym.envs.parsing import parse_action
from uni_agent_gym.envs.prompt import task_prompt
from uni_agent_gym.envs.reward import Reward, grade, split_outcome
from uni_agent_gym.envs.spaces import ACTION_SPACE, OBSERVATION_SPACE
from uni_agent_gym.workspaces.episode import Episode
from uni_agent_gym.workspaces.start_state import open_task
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.instances import load_instances, normalise
from uni_agent_gym.toolcalls import ToolCallFormat, resolve_format
from uni_agent_gym.tools import Tool, ToolCallFormatError, make_tools

logger = logging.getLogger(__name__)


def show_timing_lines() -> None:
    """`logging.log_tool_timing` / `log_query_timing` ask for INFO lines of the gym's loggers: they are let
    through, to stderr where the application has not given the gym's loggers a handler (verl's workers)."""
    gym = logging.getLogger("uni_agent_gym")
    if gym.getEffectiveLevel() > logging.INFO:
        gym.setLevel(logging.INFO)
    if not gym.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        gym.addHandler(handler)


class ResetNeeded(UniAgentGymError, RuntimeError):
    """`step()` was called before `reset()` or after the episode ended."""


class AsyncSWEEnv:
    """A Gymnasium-shaped env over SWE-bench instances, with async `reset`/`step`/`close`."""

    observation_space = OBSERVATION_SPACE
    action_space = ACTION_SPACE

    def __init__(
        self,
        config: GymConfig | None = None,
        *,
        instances: list[Mapping[str, Any]] | None = None,
        reward: Reward | None = None,
        tool_format: ToolCallFormat | None = None,
    ) -> None:
        """`instances` (rows or tasks; or `config.env.dataset`) are what `instance_id` resets pick from; `reward` grades
        the end of an episode (None: `SWEBenchReward` of `config`, as `make_env` grades; the built-in toy task
        is graded by its own tests); `tool_format`
        is how `step(text)` reads tool calls (None: `model.tool_format`, from `model.tokenizer`'s chat
        template when that is auto)."""
        self.config = config or GymConfig()
        if self.config.logging.log_tool_timing or self.config.logging.log_query_timing:
            show_timing_lines()
        self.tool_format = tool_format or resolve_format(self.config.model.tool_format, self.config.model.tokenizer)
        tasks = None if instances is None else [normalise(row, self.config.env.dataset_format) for row in instances]
        self._instances = None if tasks is None else {task.instance_id: task for task in tasks}
        if reward is None:  # one default for every way in (make_env, the verl loops, eval, a user's own)
            from uni_agent_gym.rewards.swebench import SWEBenchReward

            reward = SWEBenchReward.from_config(self.config)
        self._reward = reward
        self.episode: Episode | None = None  # the running episode's sandbox, task, start commit (`workspaces/episode.py`)
        self._last: Episode | None = None  # the last one opened: its task and directory stay readable after close
        self.tools: dict[str, Tool] = make_tools(self.config.env.tools)
        self.turn = 0
        self._done = True
        self.max_turns = self.config.env.max_turns  # this episode's; reset may lower it
        self._episode_reward: Reward | None = None
        # wall-clock seconds of the last reset ("reset") or step ("step", "tool", "reward"): out of info, which
        # must repeat for the same seed and actions (Gymnasium's determinism contract); env.timings_in_info adds them
        self.last_timings: dict[str, float] = {}

    @property
    def deployment(self) -> Deployment | None:
        """The running episode's sandbox (None between episodes)."""
        return self.episode.deployment if self.episode is not None else None

    @property
    def instance(self) -> Task | None:
        """The last episode's task (also after it was closed)."""
        return self._last.task if self._last is not None else None

    @property
    def repo_dir(self) -> str | None:
        """Where the last episode's repository is in its sandbox (also after it was closed)."""
        return self._last.repo_dir if self._last is not None else None

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The OpenAI function-calling schemas of the tools, for the model's request."""
        return [tool.schema() for tool in self.tools.values()]

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode in a fresh sandbox; the previous one, if any, is released first.

        Args:
            seed: picks the instance when `options` names none (the same seed, the same instance).
            options: `{"instance": row}` or `{"instance_id": id}`; `"max_turns": N` caps this episode's turns
                below `env.max_turns` (SWEEnv passes a Gymnasium `TimeLimit`'s limit so).
        Returns:
            The task prompt and info (`instance_id`, `turn`, `repo_dir`); the time it took is in `last_timings`.
        """
        started = time.monotonic()
        await self.close()
        instance, reward = await self._pick_instance(seed, options or {})
        # its start commit is what the agent's patch is taken against (images add a commit over base_commit)
        self.episode = self._last = await open_task(instance, self.config)
        self._episode_reward = reward
        self.tools = make_tools(self.config.env.tools, bash_timeout=self.config.deployment.command_timeout)
        self.turn, self._done = 0, False
        self.max_turns = min(self.config.env.max_turns, (options or {}).get("max_turns") or self.config.env.max_turns)
        prompt = task_prompt(instance, self.repo_dir, list(self.tools))
        info = {"instance_id": instance.instance_id, "turn": 0, "repo_dir": self.repo_dir}
        return prompt, self._timed(info, {"reset": time.monotonic() - started})

    async def _pick_instance(self, seed: int | None, options: dict[str, Any]) -> tuple[Task, Reward | None]:
        if "instance" in options:
            instance = normalise(options["instance"], self.config.env.dataset_format)
            from uni_agent_gym import toy

            return instance, toy.REWARD if instance.repo == toy.REPO_NAME else self._reward
        instances = await self._dataset()
        if instances is None:  # no dataset at all: the built-in toy task, graded by its own tests
            from uni_agent_gym import toy

            if options.get("instance_id", toy.INSTANCE_ID) != toy.INSTANCE_ID:
                raise KeyError(f"Unknown instance_id {options['instance_id']!r}: no dataset is configured (env.dataset)")
            return normalise(await toy.toy_instance(self.config.env.cache_dir)), toy.REWARD  # graded by its own tests
        if "instance_id" in options:
            if options["instance_id"] not in instances:
                raise KeyError(f"Unknown instance_id {options['instance_id']!r} (the dataset has {len(instances)} rows)")
            return instances[options["instance_id"]], self._reward
        ids = sorted(instances)
        return instances[ids[(seed or 0) % len(ids)]], self._reward

    async def _dataset(self) -> dict[str, Task] | None:
        """The configured rows by id; None for the built-in toy task (no dataset, or `toy`, as the CLI's `--dataset toy`)."""
        from uni_agent_gym import toy

        if self.config.env.dataset == toy.DATASET:
            return None
        if self._instances is None and self.config.env.dataset:
            rows = load_instances(self.config.env.dataset, split=self.config.env.split, dataset_format=self.config.env.dataset_format)
            self._instances = {row.instance_id: row for row in rows}
        return self._instances

    async def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run one tool call.

        Args:
            action: `{"name": ..., "arguments": {...}}` or model text with one tool call in it.
        Returns:
            (observation, reward, terminated, truncated, info); info has `instance_id`, `turn`, `tool`,
            `exit_code`, `error` (None, "format_error" or "tool_error"), `exit_reason` at the end
            ("finished" or "max_turns"), and at the end `reward_report`; the time it took is in `last_timings`.
        Raises:
            ResetNeeded: before `reset()` or after the episode ended.
            DeploymentError: the sandbox failed (not the agent's fault).
        """
        if self._done or self.episode is None:
            raise ResetNeeded("step() needs reset() first (the episode has not started or has ended)")
        started = time.monotonic()
        self.turn += 1
        info: dict[str, Any] = {"instance_id": self.instance.instance_id, "turn": self.turn, "tool": None,
                                "exit_code": None, "error": None, "exit_reason": None}  # fmt: skip
        terminal = False
        try:
            call = parse_action(action, self.tools, self.tool_format)
        except ToolCallFormatError as exc:
            observation = f"Invalid tool call: {exc}"
            info["error"] = "format_error"
        else:
            info["tool"] = call.name
            result = await self.tools[call.name].call(self.deployment, call.arguments)
            observation, terminal = result.output, result.terminal
            info["exit_code"], info["error"] = result.exit_code, "tool_error" if result.error else None
        tool_seconds = time.monotonic() - started
        truncated = not terminal and self.turn >= self.max_turns
        reward, reward_seconds = 0.0, 0.0
        if terminal or truncated:
            self._done = True
            info["exit_reason"] = "finished" if terminal else "max_turns"
            graded = time.monotonic()
            reward, info["reward_report"] = await self._grade()
            reward_seconds = time.monotonic() - graded
        timings = {"step": time.monotonic() - started, "tool": tool_seconds, "reward": reward_seconds}
        if self.config.logging.log_tool_timing:
            logger.info("tool %s on %s turn %d: %.3f s, exit code %s%s", info["tool"] or "(format error)", info["instance_id"],
                        self.turn, tool_seconds, info["exit_code"], f", graded in {reward_seconds:.3f} s" if reward_seconds else "")  # fmt: skip
        return observation, reward, terminal, truncated, self._timed(info, timings)

    async def end(self, exit_reason: str) -> tuple[float, dict[str, Any]]:
        """End the episode now, for a reason of the driver's (format errors, a token or cost budget, a harness
        that exited), and grade the work so far: (reward, info with `exit_reason` and `reward_report`). It needs
        no `finish` tool in `env.tools`, and the turn is not counted (no tool call was made)."""
        if self._done or self.episode is None:
            raise ResetNeeded("end() needs a running episode (reset() first)")
        self._done = True
        graded = time.monotonic()
        reward, report = await self._grade()
        info = {"instance_id": self.instance.instance_id, "turn": self.turn, "tool": None, "exit_code": None, "error": None,
                "exit_reason": exit_reason, "reward_report": report}  # fmt: skip
        return reward, self._timed(info, {"step": time.monotonic() - graded, "tool": 0.0, "reward": time.monotonic() - graded})

    def _timed(self, info: dict[str, Any], timings: dict[str, float]) -> dict[str, Any]:
        self.last_timings = timings
        return {**info, "timings": timings} if self.config.env.timings_in_info else info

    async def _grade(self) -> tuple[float, dict[str, Any] | None]:
        if self._episode_reward is None:
            return 0.0, None
        return split_outcome(await grade(self._episode_reward, self.episode))

    async def close(self) -> None:
        """Release the sandbox; idempotent, safe at any time."""
        episode, self.episode = self.episode, None
        self._done = True
        if episode is not None:
            await release(episode.deployment)  # stopped, or scrubbed back into its warm pool
